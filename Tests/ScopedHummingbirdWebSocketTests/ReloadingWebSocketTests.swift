import Hummingbird
import HummingbirdTesting
import HummingbirdWSClient
import HummingbirdWSTesting
import HummingbirdWebSocket
import Scoped
import ScopedHummingbirdWebSocket
import ScopedTestSupport
import Testing

extension ScopedValues {
    @Entry var greetingWord: String = "hello"
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
}
