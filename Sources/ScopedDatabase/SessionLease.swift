import Scoped
import Synchronization

/// The part of a database session that ScopedSQLite and ScopedPostgres share: its turn
/// (``SessionGate``), its lease, taken on the first statement and given up once, and its end.
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
    private let gate: SessionGate

    /// A session read through `entry`, whose statements wait at most `turnTimeout` for their turn.
    package init(entry: String, turnTimeout: Duration) {
        gate = SessionGate(entry: entry, turnTimeout: turnTimeout)
    }

    /// The session's entry, named by the errors it throws.
    package var entry: String { gate.entry }

    /// Runs `body` when no other statement of the session runs.
    ///
    /// - Throws: `ScopedError.scopeEnded` once the session has finished;
    ///   ``DatabaseTimeoutError`` when the turn did not come in time; what `body` throws.
    package func withTurn<R>(_ body: () async throws -> R) async throws -> R {
        try await gate.withTurn(body)
    }

    /// The lease, if one was taken.
    ///
    /// - Throws: `ScopedError.scopeEnded` once the session has finished.
    package func current() throws -> Lease? {
        try state.withLock { state in
            guard !state.isFinished else { throw ScopedError.scopeEnded(entry: gate.entry) }
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
        await gate.close()
        return state.withLock { state in
            defer {
                state.lease = nil
                state.isFinished = true
            }
            return (state.lease, state.isAborted)
        }
    }
}
