import Hummingbird
import HummingbirdTesting
import HTTPTypes
import HummingbirdWSClient
import HummingbirdWSTesting
import HummingbirdWebSocket
import Scoped
import ScopedHummingbird
import ScopedHummingbirdWebSocket
import ScopedTestSupport
import Testing

/// What the connection's and the messages' services saw: builds and closes, in order.
extension ScopedValues {
    @Entry var events: Recorder<String>? = nil
}

/// Built once per scope; its close records the outcome it was told.
protocol RecordedResourceKey: ScopedServiceKey where Value == Int {}

extension RecordedResourceKey {
    static var lifetime: ScopedLifetime { .scope }
    static func makeValue() async throws -> Int {
        let events = ScopedValues.current.events!
        events.record("build \(name)")
        return events.all.count
    }
    static func close(_ value: Int, outcome: ScopeOutcome) async throws {
        let name =
            switch outcome {
            case .success: "success"
            case .failure: "failure"
            case .cancelled: "cancelled"
            }
        ScopedValues.current.events!.record("close \(Self.name) \(name)")
    }
}

enum ConnectionResourceKey: RecordedResourceKey {}
enum MessageResourceKey: RecordedResourceKey {}

struct MessageRefused: Error {}

/// WebSocket connections and messages in scopes, on a live server.
struct ScopedWebSocketTests {
    private func makeApplication(root: ScopeRoot) -> some ApplicationProtocol {
        let webSocketRouter = Router(context: BasicWebSocketRequestContext.self)
        webSocketRouter.add(middleware: RequestIDMiddleware())
        webSocketRouter.ws("/live", root: root) { inbound, outbound, _ in
            _ = try await ScopedValues.current.service(ConnectionResourceKey.self)
            try await outbound.write(.text("id \(ScopedValues.current.requestID ?? "none")"))
            try await inbound.forEachMessage(maxSize: 1024) { message in
                _ = try await ScopedValues.current.service(MessageResourceKey.self)
                guard case .text(let text) = message, text != "refuse" else { throw MessageRefused() }
                return "ok \(text)"
            } then: { result in
                let reply = (try? result.get()) ?? "refused"
                try await outbound.write(.text("\(reply) open \(root.openScopeCount)"))
            }
        }
        return Application(
            router: Router(context: BasicWebSocketRequestContext.self),
            server: .http1WebSocketUpgrade(webSocketRouter: webSocketRouter)
        )
    }

    /// Sends `messages` on one connection with `X-Request-ID: ws-1`, then closes it; returns the
    /// text replies.
    private func converse(_ client: some TestClientProtocol, _ messages: [String]) async throws -> [String] {
        let replies = Recorder<String>()
        var configuration = WebSocketClientConfiguration()
        configuration.additionalHeaders = [.requestID: "ws-1"]
        try await client.ws("/live", configuration: configuration) { inbound, outbound, _ in
            var iterator = inbound.messages(maxSize: 1024).makeAsyncIterator()
            if case .text(let greeting) = try await iterator.next() { replies.record(greeting) }
            for message in messages {
                try await outbound.write(.text(message))
                if case .text(let reply) = try await iterator.next() { replies.record(reply) }
            }
        }
        return replies.all
    }

    @Test func eachMessageRunsInItsOwnScopeInsideTheConnectionsWhichClosesOnceAtDisconnect() async throws {
        let events = Recorder<String>()
        let root = ScopeRoot { $0.events = events }
        let messages = (1...1000).map { "m\($0)" }
        let replies = try await makeApplication(root: root)
            .test(.live) { client in
                let replies = try await converse(client, messages)
                #expect(await eventually { root.openScopeCount == 0 })
                return replies
            }
        #expect(replies.first == "id ws-1")
        // Each reply was written after its message's scope closed: only the connection's is open.
        #expect(Array(replies.dropFirst()) == messages.map { "ok \($0) open 1" })

        let all = events.all
        #expect(all.first == "build \(ConnectionResourceKey.name)")
        #expect(all.last == "close \(ConnectionResourceKey.name) success")
        #expect(all.filter { $0.contains(ConnectionResourceKey.name) }.count == 2)
        let perMessage = all.dropFirst().dropLast()
        #expect(perMessage.count == 2000)
        #expect(
            Array(perMessage)
                == Array(
                    repeating: ["build \(MessageResourceKey.name)", "close \(MessageResourceKey.name) success"],
                    count: 1000
                )
                .flatMap { $0 }
        )
    }

    @Test func workAMessageHandsOffForAfterItsCommitStartsOnceTheMessagesScopeHasClosed() async throws {
        let events = Recorder<String>()
        let root = ScopeRoot { $0.events = events }
        let webSocketRouter = Router(context: BasicWebSocketRequestContext.self)
        webSocketRouter.ws("/live", root: root) { inbound, outbound, _ in
            try await outbound.write(.text("hello"))
            try await inbound.forEachMessage(maxSize: 1024) { message in
                _ = try await ScopedValues.current.service(MessageResourceKey.self)
                guard case .text(let text) = message else { return "" }
                handOff(.afterCommit, timeout: .seconds(10)) { events.record("after the commit of \(text)") }
                handOff(.afterRollback, timeout: .seconds(10)) { events.record("after the rollback of \(text)") }
                if text == "refuse" { throw MessageRefused() }
                return text
            } then: { _ in
                try await outbound.write(.text("done"))
            }
        }
        let application = Application(
            router: Router(context: BasicWebSocketRequestContext.self),
            server: .http1WebSocketUpgrade(webSocketRouter: webSocketRouter)
        )
        try await application.test(.live) { client in
            _ = try await client.ws("/live") { inbound, outbound, _ in
                var iterator = inbound.messages(maxSize: 1024).makeAsyncIterator()
                _ = try await iterator.next()
                for message in ["first", "refuse"] {
                    try await outbound.write(.text(message))
                    _ = try await iterator.next()
                }
            }
            #expect(await eventually { root.openScopeCount == 0 })
        }
        let all = events.all
        let closes = all.indices.filter { all[$0].hasPrefix("close \(MessageResourceKey.name)") }
        #expect(
            closes.map { all[$0] } == [
                "close \(MessageResourceKey.name) success", "close \(MessageResourceKey.name) failure",
            ]
        )
        // Each piece of work started after its own message's scope had closed, the other never.
        let afterCommit = try #require(all.firstIndex(of: "after the commit of first"))
        let afterRollback = try #require(all.firstIndex(of: "after the rollback of refuse"))
        #expect(afterCommit > closes[0] && afterRollback > closes[1])
        #expect(!all.contains("after the rollback of first") && !all.contains("after the commit of refuse"))
    }

    @Test func aMessageWhoseHandlerThrowsRollsBackOnlyItsOwnScopeAndTheConnectionStaysOpen() async throws {
        let events = Recorder<String>()
        let root = ScopeRoot { $0.events = events }
        let replies = try await makeApplication(root: root)
            .test(.live) { client in
                let replies = try await converse(client, ["first", "refuse", "last"])
                #expect(await eventually { root.openScopeCount == 0 })
                return replies
            }
        #expect(
            replies == [
                "id ws-1", "ok first open 1", "refused open 1", "ok last open 1",
            ]
        )
        #expect(
            events.all.filter { $0.hasPrefix("close") } == [
                "close \(MessageResourceKey.name) success", "close \(MessageResourceKey.name) failure",
                "close \(MessageResourceKey.name) success", "close \(ConnectionResourceKey.name) success",
            ]
        )
    }

    @Test func aClientThatVanishesMidMessageLeavesNoScopeOpen() async throws {
        let events = Recorder<String>()
        let root = ScopeRoot { $0.events = events }
        try await makeApplication(root: root)
            .test(.live) { client in
                let connection = try await RawHTTPConnection(port: try #require(client.port))
                // The upgrade, then a frame header announcing 100 masked bytes, and 10 of them.
                let frame: [UInt8] = [0x81, 0x80 | 100, 1, 2, 3, 4] + Array(repeating: 0x41, count: 10)
                let upgrade =
                    "GET /live HTTP/1.1\r\nHost: test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
                let received = try await connection.exchange(bytes: Array(upgrade.utf8) + frame) {
                    $0.contains("id ")
                }
                #expect(received.hasPrefix("HTTP/1.1 101"))
                #expect(await eventually { root.openScopeCount == 0 })
            }
        // The connection's scope closed once; no message scope was opened for the cut message.
        #expect(events.all.filter { $0.contains(ConnectionResourceKey.name) }.count == 2)
        #expect(!events.all.contains { $0.contains(MessageResourceKey.name) })
    }
}
