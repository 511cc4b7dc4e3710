import HTTPTypes
import Hummingbird
import HummingbirdTesting
import HummingbirdWSClient
import HummingbirdWSTesting
import HummingbirdWebSocket
import Scoped
import ScopedReload
import ScopedHummingbirdWebSocket
import ScopedTenants
import ScopedTestSupport
import Testing

extension ScopedValues {
    @Entry var greetingWord: String = "hello"
}

/// A tenant's greeter: a tenant service, built once per tenant of a root.
final class TenantGreeter: Sendable {
    let greeting: String
    init(greeting: String) { self.greeting = greeting }
}

enum TenantGreeterKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.tenant
    static func makeValue() async throws -> TenantGreeter {
        let values = ScopedValues.current
        let greeter = TenantGreeter(greeting: "\(values.greetingWord) \(values.tenant?.rawValue ?? "nobody")")
        values.greeterBuilds?.record(greeter.greeting)
        return greeter
    }
}

extension ScopedValues {
    @Entry var greeterBuilds: Recorder<String>? = nil
}

/// A WebSocket connection keeps the root it connected on for its lifetime, across reloads; a
/// connection made after a reload opens on the new root.
struct ReloadingWebSocketTests {
    @Test func aConnectionKeepsItsRootAndTheReplacedRootDrainsWhenItCloses() async throws {
        let reloadable = ReloadableScopeRoot(ScopeRoot(startingFrom: ScopedValues()) { $0.greetingWord = "hello" })
        let connected = Signal()
        let reloaded = Signal()
        let webSocketRouter = Router(context: BasicWebSocketRequestContext.self)
        webSocketRouter.ws("/live", root: reloadable) { inbound, outbound, _ in
            try await inbound.forEachMessage(maxSize: 1024) { _ in
                ScopedValues.current.greetingWord
            } then: { result in
                try await outbound.write(.text((try? result.get()) ?? "failed"))
            }
        }
        let app = Application(
            router: Router(context: BasicWebSocketRequestContext.self),
            server: .http1WebSocketUpgrade(webSocketRouter: webSocketRouter)
        )
        try await app.test(.live) { client in
            // The first connection: one message before the reload, one after.
            let first = Task {
                let replies = Recorder<String>()
                try await client.ws("/live") { inbound, outbound, _ in
                    var messages = inbound.messages(maxSize: 1024).makeAsyncIterator()
                    for round in 0..<2 {
                        try await outbound.write(.text("greet"))
                        if case .text(let reply) = try await messages.next() { replies.record(reply) }
                        if round == 0 {
                            connected.fire()
                            await reloaded.wait()
                        }
                    }
                }
                return replies.all
            }
            await connected.wait()
            let reload = try await reloadable.reload(
                to: ScopeRoot(startingFrom: ScopedValues()) { $0.greetingWord = "ahoy" }
            )
            #expect(reload.previous.openScopeCount == 1, "the connection's scope is open on the replaced root")
            // A new connection opens on the new root.
            let second = Recorder<String>()
            try await client.ws("/live") { inbound, outbound, _ in
                try await outbound.write(.text("greet"))
                var messages = inbound.messages(maxSize: 1024).makeAsyncIterator()
                if case .text(let reply) = try await messages.next() { second.record(reply) }
            }
            reloaded.fire()
            #expect(try await first.value == ["hello", "hello"])
            #expect(second.all == ["ahoy"])
            // The first connection closed: its root drains.
            #expect(await eventually(within: .seconds(5)) { reload.previous.openScopeCount == 0 })
            await reload.previous.shutdown()
        }
    }

    @Test func aConnectionKeepsItsTenantAndItsTenantsServicesAcrossAReload() async throws {
        let builds = Recorder<String>()
        @Sendable func makeRoot(_ word: String) -> ScopeRoot {
            ScopeRoot(
                startingFrom: ScopedValues(),
                observers: [
                    Tenancy { _, values in values.greetingWord = word }
                ]
            ) { $0.greeterBuilds = builds }
        }
        let reloadable = ReloadableScopeRoot(makeRoot("hello"))
        let connected = Signal()
        let reloaded = Signal()
        let webSocketRouter = Router(context: BasicWebSocketRequestContext.self)
        webSocketRouter.ws(
            "/live",
            root: reloadable,
            tenant: { request, _ in request.headers[HTTPField.Name("X-Tenant")!].flatMap(TenantID.init) }
        ) { inbound, outbound, _ in
            try await inbound.forEachMessage(maxSize: 1024) { _ in
                let greeter = try await ScopedValues.current.service(TenantGreeterKey.self)
                return "\(greeter.greeting) \(ObjectIdentifier(greeter).hashValue)"
            } then: { result in
                try await outbound.write(.text((try? result.get()) ?? "failed"))
            }
        }
        let app = Application(
            router: Router(context: BasicWebSocketRequestContext.self),
            server: .http1WebSocketUpgrade(webSocketRouter: webSocketRouter)
        )
        /// Sends `rounds` messages as `tenant`, firing `connected` and waiting for `reloaded`
        /// after the first when `pausing`; returns the replies.
        @Sendable func greet(_ client: TestClientProtocol, as tenant: String, rounds: Int, pausing: Bool) async throws
            -> [String]
        {
            let replies = Recorder<String>()
            try await client.ws(
                "/live",
                configuration: .init(additionalHeaders: [HTTPField.Name("X-Tenant")!: tenant])
            ) { inbound, outbound, _ in
                var messages = inbound.messages(maxSize: 1024).makeAsyncIterator()
                for round in 0..<rounds {
                    try await outbound.write(.text("greet"))
                    if case .text(let reply) = try await messages.next() { replies.record(reply) }
                    if round == 0 && pausing {
                        connected.fire()
                        await reloaded.wait()
                    }
                }
            }
            return replies.all
        }
        try await app.test(.live) { client in
            let first = Task { try await greet(client, as: "acme", rounds: 2, pausing: true) }
            await connected.wait()
            let reload = try await reloadable.reload(to: makeRoot("ahoy"))
            // A new connection of the same tenant, and one of another, open on the new root.
            let acmeAfter = try await greet(client, as: "acme", rounds: 1, pausing: false)
            let beta = try await greet(client, as: "beta", rounds: 1, pausing: false)
            reloaded.fire()
            let acmeBefore = try await first.value
            // The first connection's two messages: the old root's acme, one greeter for both.
            #expect(acmeBefore.count == 2 && acmeBefore[0] == acmeBefore[1], "\(acmeBefore)")
            #expect(acmeBefore.first?.hasPrefix("hello acme ") == true, "\(acmeBefore)")
            #expect(acmeAfter.first?.hasPrefix("ahoy acme ") == true, "\(acmeAfter)")
            #expect(beta.first?.hasPrefix("ahoy beta ") == true, "\(beta)")
            // acme's greeter once on each root, beta's once.
            #expect(builds.all.sorted() == ["ahoy acme", "ahoy beta", "hello acme"])
            #expect(await eventually(within: .seconds(5)) { reload.previous.openScopeCount == 0 })
            await reload.previous.shutdown()
        }
        await reloadable.current.shutdown()
    }
}
