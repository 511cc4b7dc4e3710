extension AsyncSequence {
    /// Handles each element of a stream of messages (a streaming RPC's, a WebSocket
    /// connection's, a queue's) in a scope of its own, a child of the current scope, then
    /// responds once that scope has closed.
    ///
    /// A message is a unit of work, like a request: the `ScopedLifetime.scope` services `handle`
    /// builds (a session, its transaction) belong to the message's scope. They close with
    /// ``ScopeOutcome/success`` when `handle` returns, committing, and with
    /// ``ScopeOutcome/failure(_:)`` when it throws, rolling back that message's work only.
    /// `respond` then gets the result: the reply goes out after the commit, and an error (the
    /// handler's, or a ``ScopeCloseError`` when a commit failed) can be answered without ending
    /// the stream.
    ///
    /// ```swift
    /// try await messages.forEachMessage { note in
    ///     try await ScopedValues.current.noteRepository.add(note)
    /// } then: { result in
    ///     try await reply(saved: (try? result.get()) != nil)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - handle: handles one message inside its scope.
    ///   - respond: runs after the message's scope closed, with what `handle` returned or the
    ///     error that rolled it back. An error it throws ends the loop.
    /// - Throws: what reading the sequence or `respond` throws.
    nonisolated(nonsending) public func forEachMessage<Reply>(
        _ handle: (Element) async throws -> Reply,
        then respond: (Result<Reply, any Error>) async throws -> Void
    ) async throws {
        for try await message in self {
            let result: Result<Reply, any Error>
            do {
                result = .success(try await withScope { try await handle(message) })
            } catch {
                result = .failure(error)
            }
            try await respond(result)
        }
    }
}
