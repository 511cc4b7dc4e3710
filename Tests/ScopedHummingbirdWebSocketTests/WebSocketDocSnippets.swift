import Hummingbird
import HummingbirdTesting
import HummingbirdWSClient
import HummingbirdWSTesting
import HummingbirdWebSocket
import Scoped
import ScopedHummingbird
import ScopedHummingbirdWebSocket
import ScopedTestSupport
import SessionTestSupport
import Testing

// The snippet of ScopedHummingbirdWebSocket's doc comment, verbatim between the markers, run on a
// live server with the catalog stand-ins of SessionTestSupport.

/// A message names a movie's ID; the reply is its title, read in the message's scope.
private func handle(_ message: WebSocketMessage) async throws -> String {
    guard case .text(let text) = message, let id = Int(text) else { throw MessageRefused() }
    return try await ScopedValues.current.movieRepository.movie(id: id)?.title ?? "no such movie"
}

private func render(_ reply: Result<String, any Error>) -> String { (try? reply.get()) ?? "refused" }

struct WebSocketDocSnippets {
    @Test func eachMessageIsHandledInItsScopeAndAnsweredAfterIt() async throws {
        let root = ScopeRoot { _ in }
        let webSocketRouter = Router(context: BasicWebSocketRequestContext.self)
        // SNIPPET-BEGIN
        webSocketRouter.add(middleware: RequestIDMiddleware())
        webSocketRouter.ws("/live", root: root) { inbound, outbound, _ in
            try await inbound.forEachMessage(maxSize: 1 << 16) { message in
                try await handle(message)  // in the message's scope: commits when it returns
            } then: { reply in
                try await outbound.write(.text(render(reply)))  // after the commit or the rollback
            }
        }
        // SNIPPET-END
        let app = Application(
            router: Router(context: BasicWebSocketRequestContext.self),
            server: .http1WebSocketUpgrade(webSocketRouter: webSocketRouter)
        )
        let replies = Recorder<String>()
        try await app.test(.live) { client in
            try await client.ws("/live") { inbound, outbound, _ in
                var messages = inbound.messages(maxSize: 1024).makeAsyncIterator()
                for message in ["1", "x", "2"] {
                    try await outbound.write(.text(message))
                    if case .text(let reply) = try await messages.next() { replies.record(reply) }
                }
            }
        }
        #expect(replies.all == ["Heat", "refused", "Alien"])
        #expect(root.openScopeCount == 0)
        await root.shutdown()
    }
}
