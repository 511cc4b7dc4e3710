public import Scoped
public import Synchronization

/// What every database layer's request session needs: its turn, its lease, and its end.
///
/// The lease (a connection, a transaction) is taken on the first statement and given up once.
/// ScopedSQLite's and ScopedPostgres' sessions are written on it, and a layer written outside
/// this package can be.
///
/// A session runs one statement at a time, even when concurrent child tasks of its scope use
/// it: the turn is a pool of one.
///
/// A session runs every statement between ``takeTurn()`` and ``endTurn(_:)``, reads its lease with ``current()``
/// and stores the one it made with ``store(_:)``. ``finish()`` refuses every later statement,
/// waits for the one in flight, and hands back the lease for the session to commit or roll back
/// on; from then on ``current()`` throws `ScopedError.scopeEnded`, and a lease made by a
/// statement that raced the end is refused by ``store(_:)``, so nothing is leased after the end.
///
/// Inlinable, as ``AsyncPool`` is, so that the database target specializes it for its lease: a
/// session's every statement takes its turn and reads its lease.
public final class SessionLease<Lease: Sendable>: Sendable {
    @usableFromInline
    struct State {
        @usableFromInline var lease: Lease?
        @usableFromInline var isFinished = false
        /// A statement failed or ran out of time: the transaction cannot commit.
        @usableFromInline var isAborted = false

        @inlinable
        init() {}
    }

    @usableFromInline let state: Mutex<State>
    @usableFromInline let turn: AsyncPool<Int>
    /// The session's entry, named by the errors it throws.
    public let entry: String
    /// How long a statement waits for its turn behind the session's other statements.
    @usableFromInline let turnTimeout: Duration

    /// A session read through `entry`, whose statements wait at most `turnTimeout` for their turn.
    @inlinable
    public init(entry: String, turnTimeout: Duration) {
        // Here, not as the property's initial value, which is not inlinable: specialized.
        self.state = Mutex(State())
        self.entry = entry
        self.turnTimeout = turnTimeout
        self.turn = AsyncPool([0]) { ScopedError.scopeEnded(entry: entry) }
    }

    /// A statement's turn: no other statement of the session runs until it is given back.
    public struct Turn: Sendable {
        @usableFromInline let permit: Int

        @usableFromInline
        init(permit: Int) {
            self.permit = permit
        }
    }

    /// Waits until no other statement of the session runs, and takes the turn; give it back
    /// with ``endTurn(_:)`` once the statement has run, on every path (`defer`).
    ///
    /// A session takes and ends its turn itself, rather than passing its statement in a
    /// closure, so that a statement's path goes into this module and returns, and never comes
    /// back out of it into the database's own.
    ///
    /// - Throws: `ScopedError.scopeEnded` once the session has finished;
    ///   ``DatabaseTimeoutError`` (a `lease`: the wait was for the session's connection, bounded
    ///   by the lease timeout) when the turn did not come in time.
    @inlinable
    public func takeTurn() async throws -> Turn {
        let entry = entry
        let timeout = turnTimeout
        let permit = try await turn.acquire(waitingAtMost: timeout) {
            DatabaseTimeoutError(operation: .lease, timeout: timeout, entry: entry)
        }
        return Turn(permit: permit)
    }

    /// Gives back the turn ``takeTurn()`` took: the next statement waiting runs.
    @inlinable
    public func endTurn(_ taken: Turn) {
        turn.release(taken.permit)
    }

    /// The lease, if one was taken.
    ///
    /// - Throws: `ScopedError.scopeEnded` once the session has finished.
    @inlinable
    public func current() throws -> Lease? {
        try state.withLock { state in
            guard !state.isFinished else { throw ScopedError.scopeEnded(entry: entry) }
            return state.lease
        }
    }

    /// Makes `lease` the session's lease, or clears it.
    ///
    /// - Returns: `false` when the session finished first: the caller gives `lease` back.
    @inlinable
    public func store(_ lease: Lease?) -> Bool {
        state.withLock { state in
            guard !state.isFinished else { return false }
            state.lease = lease
            return true
        }
    }

    /// Records that the transaction failed and cannot commit.
    @inlinable
    public func markAborted() {
        state.withLock { $0.isAborted = true }
    }

    /// Whether the session holds a lease now.
    public var isActive: Bool { state.withLock { $0.lease != nil } }

    /// Refuses every later statement, waits for the one in flight, and returns the lease to
    /// end, with whether the transaction failed.
    @inlinable
    public func finish() async -> (lease: Lease?, isAborted: Bool) {
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
