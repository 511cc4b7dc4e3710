import Synchronization

/// A streamed response body bound to its request's scope: each chunk goes to the client as the
/// next one is written, the last is held back until the scope has closed, and the scope closes
/// with the outcome the body's end calls for.
///
/// Every body an adapter streams through it keeps the same promise (on Vapor, a body made with
/// `Response.Body(scopedAsyncStream:)`; a plain Vapor stream is written after its scope closed,
/// because Vapor keeps its writer private): a client that received the
/// whole response received it after the request's transaction committed; a commit that fails
/// cuts the response short (the last chunk never goes out); a client that went away closes the
/// scope as ``ScopeOutcome/cancelled``. A body of known length up to ``bufferedLimit`` is not
/// streamed: the adapter produces it in memory inside the scope and closes the scope before it
/// sends the response's head, so that a commit failure becomes the response's status.
///
/// An adapter wraps its framework's body writer:
///
/// ```swift
/// let body = HeldBackBody<ByteBuffer>(scope: scope)
/// // For each chunk the handler's body writes:
/// if let previous = body.hold(chunk) { try await body.sending { try await connection.write(previous) } }
/// // When the handler's body ends:
/// if let last = try await body.finish() { try await body.sending { try await connection.write(last) } }
/// // When it throws:
/// await body.fail(with: error)
/// ```
public final class HeldBackBody<Chunk: Sendable>: Sendable {
    private struct State {
        var pending: Chunk?
        var clientWentAway = false
    }

    /// The longest body of known length an adapter produces in memory inside its scope before
    /// the response's head is sent: 64 KiB, on every stack.
    public static var bufferedLimit: Int { 64 * 1024 }

    /// The scope the body closes.
    public let scope: Scope
    private let state = Mutex(State())

    /// A body that closes `scope` when it ends.
    public init(scope: Scope) {
        self.scope = scope
    }

    /// Whether a write to the client failed: the client went away.
    public var clientWentAway: Bool { state.withLock { $0.clientWentAway } }

    /// Holds `chunk` back and returns the chunk held before it, which can now be sent.
    public func hold(_ chunk: Chunk) -> Chunk? {
        state.withLock { state in
            defer { state.pending = chunk }
            return state.pending
        }
    }

    /// Runs `send`, a write to the client; when it throws, records that the client went away,
    /// so the scope closes as ``ScopeOutcome/cancelled``.
    nonisolated(nonsending) public func sending<R>(_ send: () async throws -> R) async throws -> R {
        do {
            return try await send()
        } catch {
            state.withLock { $0.clientWentAway = true }
            throw error
        }
    }

    /// Closes the scope for a body that ended, with ``ScopeOutcome/success`` (or
    /// ``ScopeOutcome/cancelled`` when a write to the client failed and the body finished
    /// anyway), and returns the chunk held back, to be sent now.
    ///
    /// - Throws: what the scope's close throws (a commit that failed); the held chunk is then
    ///   dropped, and the adapter ends the response with the error.
    nonisolated(nonsending) public func finish() async throws -> Chunk? {
        try await scope.close(clientWentAway ? .cancelled : .success)
        return state.withLock { $0.pending.take() }
    }

    /// The outcome the scope closes with for `error`, which ended the body:
    /// ``ScopeOutcome/cancelled`` when the client went away, else `ScopeOutcome(endingWith:)`.
    public func outcome(endingWith error: any Error) -> ScopeOutcome {
        clientWentAway ? .cancelled : ScopeOutcome(endingWith: error)
    }

    /// Closes the scope for a body that threw `error`, with ``outcome(endingWith:)``, and drops
    /// the chunk held back.
    ///
    /// A close failure goes to the root's close-error handler.
    nonisolated(nonsending) public func fail(with error: any Error) async {
        _ = state.withLock { $0.pending.take() }
        try? await scope.close(outcome(endingWith: error))
    }
}
