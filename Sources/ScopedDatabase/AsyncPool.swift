public import Scoped
public import Synchronization

/// A set of resources handed out one task at a time: a database layer's connection pool, and
/// the one turn that serializes a session's statements (``SessionLease``).
///
/// A task that finds none free suspends until one is returned; no thread ever blocks waiting,
/// and a wait bounded by a timeout is an entry on the core's `DeadlineWatchdog`, not a task.
/// ScopedSQLite's readers and ScopedPostgres' test databases are pools of this kind; a database
/// layer written outside this package pools its connections the same way:
///
/// ```swift
/// let pool = AsyncPool(connections) { DatabaseClosedError() }
/// let connection = try await pool.acquire(waitingAtMost: leaseTimeout) { LeaseTimeoutError() }
/// defer { pool.release(connection) }
/// ```
///
/// What a request runs (a free resource taken, given back, the pool closed) is inlinable, and
/// so specialized for the resource in the database target that calls it: run unspecialized,
/// each `Mutex<State>` access looked up its generic metadata in the runtime's cache (about 340
/// instructions a lookup here, counted under callgrind). Waiting, the slow path, is not.
public final class AsyncPool<Resource: Sendable>: Sendable {
    /// A task waiting for a resource.
    ///
    /// A class, so that an optional waiter is a nullable reference: `CheckedContinuation`'s
    /// layout is the concurrency library's, unknown to this module, and an optional struct that
    /// holds one is tested through value witnesses that look up the continuation's metadata, on
    /// every release, waiters or not (it was 19 lookups a request).
    @usableFromInline
    final class Waiter: Sendable {
        @usableFromInline let continuation: CheckedContinuation<Resource, any Error>
        /// When it stops waiting, if it waits for at most a timeout: set once, after it is
        /// queued, with the pool locked, and read by whoever took it out of the queue.
        @usableFromInline let deadline = Mutex<DeadlineWatchdog.Deadline?>(nil)

        init(continuation: CheckedContinuation<Resource, any Error>) {
            self.continuation = continuation
        }

        /// Ends the wait: cancels its deadline and resumes the task; called once, by whoever
        /// took the waiter out of the queue.
        @inlinable
        func resume(with result: Result<Resource, any Error>) {
            if let deadline = deadline.withLock({ $0 }) { DeadlineWatchdog.shared.cancel(deadline) }
            continuation.resume(with: result)
        }
    }

    @usableFromInline
    struct State {
        @usableFromInline var available: [Resource]
        /// The waiters by ID, each found in O(1) by whoever takes it out.
        ///
        /// A release, a deadline or a cancellation takes a waiter out; `order` keeps their IDs in
        /// arrival order, and an ID whose waiter left early stays there and is skipped.
        /// Thousands wait at once under load: a scan per waiter made that quadratic, and starved
        /// the cooperative pool.
        @usableFromInline var waiters: [UInt64: Waiter] = [:]
        @usableFromInline var order: [UInt64] = []
        @usableFromInline var orderHead = 0
        @usableFromInline var nextWaiterID: UInt64 = 0
        @usableFromInline var leased = 0
        @usableFromInline var isClosed = false
        @usableFromInline var drainWaiters: [CheckedContinuation<Void, Never>] = []

        @inlinable
        init(available: [Resource]) {
            self.available = available
        }

        mutating func enqueue(_ waiter: Waiter, id: UInt64) {
            waiters[id] = waiter
            order.append(id)
            // IDs of waiters that left early are dropped once they outnumber the waiting.
            if order.count - orderHead > 2 * waiters.count + 64 {
                order = order[orderHead...].filter { waiters[$0] != nil }
                orderHead = 0
            }
        }

        /// The longest waiter, taken out of the queue.
        @inlinable
        mutating func dequeueOldest() -> Waiter? {
            while orderHead < order.count {
                let id = order[orderHead]
                orderHead += 1
                if let waiter = waiters.removeValue(forKey: id) {
                    if orderHead >= 1024 && orderHead * 2 >= order.count {
                        order.removeFirst(orderHead)
                        orderHead = 0
                    }
                    return waiter
                }
            }
            order.removeAll(keepingCapacity: true)
            orderHead = 0
            return nil
        }
    }

    @usableFromInline let state: Mutex<State>
    /// How many resources the pool holds in all.
    public let size: Int
    /// What acquiring from a closed pool throws.
    @usableFromInline let closedError: @Sendable () -> any Error

    /// A pool of `resources`, whose acquisitions throw `closedError()` once it is closed.
    @inlinable
    public init(_ resources: [Resource], closedError: @escaping @Sendable () -> any Error) {
        state = Mutex(State(available: resources))
        size = resources.count
        self.closedError = closedError
    }

    /// Takes a free resource, suspending until one is returned if none is free, for at most
    /// `timeout`.
    ///
    /// A waiting task is a continuation in the pool's queue and its deadline an entry on
    /// `DeadlineWatchdog`: waiting creates no task and no timer. Whoever takes the waiter out of
    /// the queue (a release handing it a resource, its deadline, its task's cancellation, the
    /// pool's close) resumes it, so it is resumed exactly once and a resource handed over as the
    /// deadline expires is never lost.
    ///
    /// - Throws: `timedOut()` when no resource came back within `timeout`; `CancellationError`
    ///   if the task is cancelled while waiting; the pool's closed error once it is closed.
    @inlinable
    public func acquire(
        waitingAtMost timeout: Duration,
        timedOut: @escaping @Sendable () -> any Error
    ) async throws -> Resource {
        if let free = try takeFree() { return free }
        return try await wait(timeout: timeout, timedOut: timedOut)
    }

    /// A free resource taken without waiting, or `nil` when none is free.
    @inlinable
    func takeFree() throws -> Resource? {
        try state.withLock { state in
            if state.isClosed { throw closedError() }
            guard let resource = state.available.popLast() else { return nil }
            state.leased += 1
            return resource
        }
    }

    /// Takes a free resource, suspending until one is returned if none is free.
    ///
    /// - Throws: `CancellationError` if the task is cancelled while waiting; the pool's
    ///   closed error once it is closed.
    @inlinable
    public func acquire() async throws -> Resource {
        // Fast path: a free resource is taken without suspending the task.
        if let free = try takeFree() { return free }
        return try await wait(timeout: nil, timedOut: nil)
    }

    /// Queues the calling task until a resource is handed to it, its deadline expires, it is
    /// cancelled or the pool closes.
    @usableFromInline
    func wait(
        timeout: Duration?,
        timedOut: (@Sendable () -> any Error)?
    ) async throws -> Resource {
        let id = state.withLock { state in
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let result: Result<Resource, any Error>? = state.withLock { state in
                    if state.isClosed { return .failure(closedError()) }
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if let resource = state.available.popLast() {
                        state.leased += 1
                        return .success(resource)
                    }
                    state.enqueue(Waiter(continuation: continuation), id: id)
                    return nil
                }
                if let result { return continuation.resume(with: result) }
                guard let timeout, let timedOut else { return }
                // Registered outside the pool's lock; the waiter may already be gone (served,
                // cancelled, closed), and then the deadline is cancelled again at once.
                let deadline = DeadlineWatchdog.shared.register(after: timeout) { [self] in
                    remove(id)?.resume(with: .failure(timedOut()))
                }
                let stillWaiting = state.withLock { state in
                    guard let waiter = state.waiters[id] else { return false }
                    waiter.deadline.withLock { $0 = deadline }
                    return true
                }
                if !stillWaiting { DeadlineWatchdog.shared.cancel(deadline) }
            }
        } onCancel: {
            remove(id)?.resume(with: .failure(CancellationError()))
        }
    }

    /// Takes the waiter `id` out of the queue; `nil` when something else took it out first
    /// (and so resumes it).
    private func remove(_ id: UInt64) -> Waiter? {
        state.withLock { $0.waiters.removeValue(forKey: id) }
    }

    /// Returns a resource taken with ``acquire()``, handing it to the longest waiter if any.
    @inlinable
    public func release(_ resource: Resource) {
        let (waiter, drained) = state.withLock { state -> (Waiter?, [CheckedContinuation<Void, Never>]) in
            if let waiter = state.dequeueOldest() { return (waiter, []) }
            state.leased -= 1
            state.available.append(resource)
            guard state.leased == 0 else { return (nil, []) }
            defer { state.drainWaiters = [] }
            return (nil, state.drainWaiters)
        }
        waiter?.resume(with: .success(resource))
        for continuation in drained { continuation.resume() }
    }

    /// How many tasks are waiting for a resource right now.
    public var waitingCount: Int { state.withLock { $0.waiters.count } }

    /// How many resources are free right now.
    public var availableCount: Int { state.withLock { $0.available.count } }

    /// Refuses new acquisitions, waits for every leased resource to come back, and returns
    /// all of them.
    @inlinable
    public func close() async -> [Resource] {
        let (waiters, drained) = state.withLock { state -> ([Waiter], Bool) in
            state.isClosed = true
            var waiters: [Waiter] = []
            while let waiter = state.dequeueOldest() { waiters.append(waiter) }
            return (waiters, state.leased == 0)
        }
        for waiter in waiters { waiter.resume(with: .failure(closedError())) }
        // Nothing leased (a session's turn, closed after its last statement): no continuation
        // to make, and none of the task's allocations it takes.
        if !drained { await waitUntilDrained() }
        return state.withLock { state in
            defer { state.available = [] }
            return state.available
        }
    }

    /// Returns once every leased resource is back; the pool is closed.
    @usableFromInline
    func waitUntilDrained() async {
        await withCheckedContinuation { continuation in
            let done = state.withLock { state in
                if state.leased == 0 { return true }
                state.drainWaiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }
}
