public import HummingbirdWebSocket
import Scoped

extension WebSocketInboundStream {
    /// Handles each inbound message in a scope of its own, a child of the current (the
    /// connection's) scope, then responds once that scope has closed: the core's
    /// `AsyncSequence.forEachMessage(_:then:)` over the connection's messages.
    ///
    /// A message is a unit of work, like a request: the `ScopedLifetime.scope`
    /// services `handle` builds (a session, its transaction) belong to the message's scope.
    /// They close with `ScopeOutcome.success` when `handle` returns, committing, and
    /// with `ScopeOutcome.failure(_:)` when it throws, rolling back that message's work
    /// only. `respond` then gets the result: the reply is sent after the commit, and an error
    /// (the handler's, or a `ScopeCloseError` when a commit failed) can be answered
    /// without closing the connection.
    ///
    /// - Parameters:
    ///   - maxSize: the largest message accepted, in bytes; a larger one ends the connection.
    ///   - handle: handles one message inside its scope.
    ///   - respond: runs after the message's scope closed, with what `handle` returned or the
    ///     error that rolled it back. An error it throws ends the connection.
    /// - Throws: what reading the connection or `respond` throws.
    nonisolated(nonsending) public func forEachMessage<Reply>(
        maxSize: Int,
        _ handle: (WebSocketMessage) async throws -> Reply,
        then respond: (Result<Reply, any Error>) async throws -> Void
    ) async throws {
        try await messages(maxSize: maxSize).forEachMessage(handle, then: respond)
    }
}
