import Scoped

/// The turn of a database session's statements, shared by ScopedSQLite and ScopedPostgres.
///
/// A session runs one statement at a time, even when concurrent child tasks of its scope use
/// it. Once its scope ends, ``close()`` refuses every later statement with
/// `ScopedError.scopeEnded`, so a session kept past its scope (captured by an unstructured
/// task) leases nothing, and waits for the statement in flight, so the commit never runs on
/// the connection at the same time as a statement.
package final class SessionGate: Sendable {
    /// The session's entry, named by the errors it throws.
    package let entry: String
    /// How long a statement waits for its turn behind the session's other statements.
    package let turnTimeout: Duration
    private let turn: AsyncPool<Int>

    /// A gate for the session read through `entry`.
    package init(entry: String, turnTimeout: Duration) {
        self.entry = entry
        self.turnTimeout = turnTimeout
        self.turn = AsyncPool([0]) { ScopedError.scopeEnded(entry: entry) }
    }

    /// Runs `body` when no other statement of the session runs.
    ///
    /// - Throws: `ScopedError.scopeEnded` once the session has been closed;
    ///   ``DatabaseTimeoutError`` when the turn did not come within ``turnTimeout``; what
    ///   `body` throws.
    package func withTurn<R>(_ body: () async throws -> R) async throws -> R {
        let entry = entry
        let timeout = turnTimeout
        let permit = try await turn.acquire(waitingAtMost: timeout) {
            DatabaseTimeoutError(operation: .statement, timeout: timeout, entry: entry)
        }
        defer { turn.release(permit) }
        return try await body()
    }

    /// Refuses every later statement, and returns once the statement in flight has finished.
    package func close() async {
        _ = await turn.close()
    }
}
