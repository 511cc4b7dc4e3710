/// An application root as an adapter opens scopes on it: a ``ScopeRoot``, or ScopedReload's
/// `ReloadableScopeRoot`, whose root changes with each reload.
///
/// An adapter takes `some ScopeRootSource` and reads ``current`` as each request (job, message)
/// begins, so one initializer serves both kinds of root, and a reload takes effect for new
/// requests while requests in flight keep the root they began on:
///
/// ```swift
/// struct ScopeMiddleware {
///     let root: any ScopeRootSource
///     func handle<R>(_ request: () async throws -> R) async throws -> R {
///         try await root.current.withScope { try await request() }
///     }
/// }
/// ```
public protocol ScopeRootSource: Sendable {
    /// The root a scope opened now belongs to.
    var current: ScopeRoot { get }
}

extension ScopeRoot: ScopeRootSource {
    /// This root: a plain root is its own current root.
    public var current: ScopeRoot { self }
}

extension Scope {
    /// Runs `operation` in the scope; when it throws, closes the scope with the outcome
    /// `outcome` gives for the error, then rethrows it.
    ///
    /// For work whose every piece ends the unit of work when it fails: a request's handler and
    /// its body, handed-off work. An adapter runs its framework's handler in it, and closes the
    /// scope itself on success, once the response's body has been written (see
    /// <doc:WritingAnAdapter>). Close failures on this path go to the root's close-error handler;
    /// the operation's error is the one rethrown.
    ///
    /// - Parameters:
    ///   - outcome: the outcome the scope closes with for the error `operation` threw; by
    ///     default `ScopeOutcome(endingWith:)`, which makes a `CancellationError` `cancelled`
    ///     and any other error a `failure`.
    ///   - operation: the work, run inside the scope.
    /// - Returns: what `operation` returns; the scope is still open.
    /// - Throws: what `operation` throws, after the scope has closed.
    @inlinable
    nonisolated(nonsending) public func runClosingOnFailure<R>(
        outcome: (any Error) -> ScopeOutcome = { ScopeOutcome(endingWith: $0) },
        _ operation: () async throws -> R
    ) async throws -> R {
        do {
            return try await run(operation)
        } catch {
            try? await close(outcome(error))
            throw error
        }
    }
}

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
