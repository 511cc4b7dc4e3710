import Hummingbird
import HummingbirdTesting
import HummingbirdWSClient
import HummingbirdWSTesting
import HummingbirdWebSocket
import Scoped
import ScopedHummingbird
import ScopedHummingbirdWebSocket
import ScopedTestSupport
import ScopedTesting
import Testing

extension ScopedValues {
    /// A live-only entry: a test that reaches it without overriding it fails.
    @Entry(testValue: "stand-in") var liveFeed: String = "live feed"
}

/// A WebSocket route of an application that builds its own root, tested as its users test it.
struct LiveOnlyWebSocketTests {
    private func makeApplication() -> (some ApplicationProtocol, ScopeRoot) {
        let root = ScopeRoot()
        let webSocketRouter = Router(context: BasicWebSocketRequestContext.self)
        webSocketRouter.ws("/feed", root: root) { inbound, outbound, _ in
            try await inbound.forEachMessage(maxSize: 1024) { _ in
                ScopedValues.current.liveFeed
            } then: { result in
                try await outbound.write(.text((try? result.get()) ?? "refused"))
            }
        }
        let app = Application(
            router: Router(context: BasicWebSocketRequestContext.self),
            server: .http1WebSocketUpgrade(webSocketRouter: webSocketRouter)
        )
        return (app, root)
    }

    private func firstReply(_ client: some TestClientProtocol) async throws -> String? {
        let reply = Recorder<String>()
        try await client.ws("/feed") { inbound, outbound, _ in
            try await outbound.write(.text("next"))
            var iterator = inbound.messages(maxSize: 1024).makeAsyncIterator()
            if case .text(let text) = try await iterator.next() { reply.record(text) }
        }
        return reply.all.first
    }

    @Test(.scoped())
    func aLiveOnlyEntryReadByAMessageFailsTheTest() async throws {
        let (app, root) = makeApplication()
        try await withKnownIssue {
            try await app.test(.live) { client in
                let reply = try await firstReply(client)
                #expect(reply == "stand-in")
            }
        } matching: { issue in
            issue.comments.contains { $0.rawValue.contains("'liveFeed' is live-only") }
        }
        await root.shutdown()
    }

    @Test(.scoped { $0.liveFeed = "test feed" })
    func aMessageSeesTheTestsOverride() async throws {
        let (app, root) = makeApplication()
        try await app.test(.live) { client in
            let reply = try await firstReply(client)
            #expect(reply == "test feed")
        }
        await root.shutdown()
    }
}
