import Scoped
import Synchronization

/// The part of a database session that ScopedSQLite and ScopedPostgres share: its turn, its
/// lease, taken on the first statement and given up once, and its end.
///
/// A session runs one statement at a time, even when concurrent child tasks of its scope use
/// it: the turn is a pool of one.
///
/// A session runs every statement inside ``withTurn(_:)``, reads its lease with ``current()``
/// and stores the one it made with ``store(_:)``. ``finish()`` refuses every later statement,
/// waits for the one in flight, and hands back the lease for the session to commit or roll back
/// on; from then on ``current()`` throws `ScopedError.scopeEnded`, and a lease made by a
/// statement that raced the end is refused by ``store(_:)``, so nothing is leased after the end.
package final class SessionLease<Lease: Sendable>: Sendable {
    private struct State {
        var lease: Lease?
        var isFinished = false
        /// A statement failed or ran out of time: the transaction cannot commit.
        var isAborted = false
    }

    private let state = Mutex(State())
    private let turn: AsyncPool<Int>
    /// The session's entry, named by the errors it throws.
    package let entry: String
    /// How long a statement waits for its turn behind the session's other statements.
    private let turnTimeout: Duration

    /// A session read through `entry`, whose statements wait at most `turnTimeout` for their turn.
    package init(entry: String, turnTimeout: Duration) {
        self.entry = entry
        self.turnTimeout = turnTimeout
        self.turn = AsyncPool([0]) { ScopedError.scopeEnded(entry: entry) }
    }

    /// Runs `body` when no other statement of the session runs.
    ///
    /// - Throws: `ScopedError.scopeEnded` once the session has finished;
    ///   ``DatabaseTimeoutError`` (a `lease`: the wait was for the session's connection, bounded
    ///   by the lease timeout) when the turn did not come in time; what `body` throws.
    package func withTurn<R>(_ body: () async throws -> R) async throws -> R {
        let entry = entry
        let timeout = turnTimeout
        let permit = try await turn.acquire(waitingAtMost: timeout) {
            DatabaseTimeoutError(operation: .lease, timeout: timeout, entry: entry)
        }
        defer { turn.release(permit) }
        return try await body()
    }

    /// The lease, if one was taken.
    ///
    /// - Throws: `ScopedError.scopeEnded` once the session has finished.
    package func current() throws -> Lease? {
        try state.withLock { state in
            guard !state.isFinished else { throw ScopedError.scopeEnded(entry: entry) }
            return state.lease
        }
    }

    /// Makes `lease` the session's lease, or clears it.
    ///
    /// - Returns: `false` when the session finished first: the caller gives `lease` back.
    package func store(_ lease: Lease?) -> Bool {
        state.withLock { state in
            guard !state.isFinished else { return false }
            state.lease = lease
            return true
        }
    }

    /// Records that the transaction failed and cannot commit.
    package func markAborted() {
        state.withLock { $0.isAborted = true }
    }

    /// Whether the session holds a lease now.
    package var isActive: Bool { state.withLock { $0.lease != nil } }

    /// Refuses every later statement, waits for the one in flight, and returns the lease to
    /// end, with whether the transaction failed.
    package func finish() async -> (lease: Lease?, isAborted: Bool) {
        _ = await turn.close()
        return state.withLock { state in
            defer {
                state.lease = nil
                state.isFinished = true
            }
            return (state.lease, state.isAborted)
        }
    }
}
