import Logging
import Synchronization

/// Hands `operation` off to run after the current unit of work, in a scope of its own that
/// keeps what it uses alive until it ends.
///
/// Use it for work a request starts but its client does not wait for: a notification, an
/// index refresh, a cache warm-up. A plain `Task { }` would run with the request's scope
/// after that scope closed, and its first read of a scope service would throw
/// ``ScopedError/scopeEnded(entry:)``. Work handed off here instead runs in a new child scope
/// of the current one, opened before `handOff` returns:
///
/// - It reads the current scope's values (its request ID, its principal, its overrides;
///   change them with ``withScopedValues(_:operation:)-1xu3d`` around the call), and builds its own ``ScopedLifetime/scope`` services (its own
///   transaction), which close when it ends: ``ScopeOutcome/success`` if it returned,
///   ``ScopeOutcome/failure(_:)`` if it threw.
/// - It is cancelled when it runs longer than `timeout`: its scope then closes as
///   ``ScopeOutcome/cancelled`` at once, whether or not the work stops, and its
///   ``HandedOffWork/value`` throws ``ScopedError/timedOut(after:)``. The deadline is an entry
///   on the library's deadline timer, not a task: work that ends in time costs one task.
/// - It counts as open on the application root, so ``ScopeRoot/shutdown()`` waits for it:
///   graceful shutdown lets handed-off work finish, each bounded by its timeout.
///
/// ```swift
/// router.post("/movies/:id/ratings") { request, context in
///     let rating = try await ratings.rate(movieID: id, stars: stars)
///     handOff(timeout: .seconds(5)) {
///         await catalogEvents.publish(.rated(rating))  // after the response, in its own scope
///     }
///     return try JSONResponse.make(rating, status: .created)
/// }
/// ```
///
/// A test that uses ScopedTesting's `.scoped` trait or `withTestScope` and ends while work it
/// handed off still runs records an issue naming where it was handed off.
///
/// - Parameters:
///   - timeout: how long the work may run before it is cancelled.
///   - fileID: where the work is handed off, for that issue.
///   - line: the line it is handed off on.
///   - operation: the work.
/// - Returns: the work, to await or cancel. Awaiting its ``HandedOffWork/value`` is optional:
///   what the work throws ends there, and in the outcome its scope's services are told; it is
///   also logged, as a warning on `Logger.current` naming the site, and counted in
///   ``ScopeRoot/handOffsFailed``, so that work nobody awaits does not fail unseen. Outside
///   every application root the work does not run, and its value throws
///   ``ScopedError/outsideRoot(entry:)``.
@discardableResult
public func handOff(
    timeout: Duration,
    fileID: String = #fileID,
    line: Int = #line,
    operation: @escaping @Sendable () async throws -> Void
) -> HandedOffWork {
    // Opened and counted now, before the current scope can close and before a shutdown can
    // find the root drained.
    let current = ScopedValues.current
    let site = HandedOffWork.Site(fileID: fileID, line: line)
    let scope: Scope
    do {
        scope = Scope(childOf: current, in: try current.parentScope(), handedOffAt: site) { _ in }
    } catch {
        // Outside every root: nothing to run the work in, and nothing would wait for it.
        return HandedOffWork(.failed(error))
    }
    let run = HandedOffWork.Run(scope: scope, timeout: timeout, operation: operation, at: site)
    run.start()
    return HandedOffWork(.running(run))
}

/// Hands `operation` off to start only once the current scope has ended: after its commit with
/// ``HandedOffWork/Start/afterCommit``, after its rollback with
/// ``HandedOffWork/Start/afterRollback``.
///
/// Use it for work that must not run unless the request's write is there to see: the e-mail
/// about an order, the job that reads the row, the webhook. ``handOff(timeout:fileID:line:operation:)``
/// starts its work at once, beside the request's own commit; this one waits for the current
/// scope (a request's, a job's, `withScope`'s) to close its services, and then decides:
///
/// - The scope *committed* when it ended with ``ScopeOutcome/success`` and every service it
///   built closed without throwing: its session's transaction committed (on SQLite, PostgreSQL
///   or Fluent alike), and for a scope with no database, its work succeeded. After-commit work
///   then starts; after-rollback work does not.
/// - Any other end is a *rollback*: the work threw or was cancelled, or a close threw (a
///   commit that failed). After-rollback work then starts (a compensation, a log); after-commit
///   work never does: its root counts it in ``ScopeRoot/handOffsNotStarted`` and logs a
///   warning naming where it was handed off.
///
/// Otherwise it is `handOff`: the work runs in a child scope of its own, opened before this
/// call returns, with the current scope's values (read as they are now); it counts as open on
/// the root from now on, so ``ScopeRoot/shutdown()`` waits for it; its `timeout` counts from
/// when it starts; it is cancelled past it.
///
/// ```swift
/// let order = try await orders.place(cart)  // in the request's transaction
/// handOff(.afterCommit, timeout: .seconds(10)) {
///     try await mailer.sendConfirmation(of: order)  // only once the order is committed
/// }
/// ```
///
/// The work lives in the process: a crash between the commit and its end loses it. Work that
/// must survive that belongs in a durable job queue, its job written in the request's own
/// transaction (<doc:ScopesAndLifetimes#Work-that-must-survive-a-crash>).
///
/// - Parameters:
///   - start: whether the work starts after the current scope's commit or after its rollback.
///   - timeout: how long the work may run, once started, before it is cancelled.
///   - fileID: where the work is handed off, for the log and a test's issue.
///   - line: the line it is handed off on.
///   - operation: the work.
/// - Returns: the work, to await or cancel. Its ``HandedOffWork/value`` throws a
///   ``HandedOffWork/NotStarted`` when the work never starts (the scope ended the other way,
///   the work was cancelled first, the current scope was closing already, or there is no
///   scope to wait for: in a root's own values), and ``ScopedError/outsideRoot(entry:)``
///   outside every root.
@discardableResult
public func handOff(
    _ start: HandedOffWork.Start,
    timeout: Duration,
    fileID: String = #fileID,
    line: Int = #line,
    operation: @escaping @Sendable () async throws -> Void
) -> HandedOffWork {
    let current = ScopedValues.current
    let site = HandedOffWork.Site(fileID: fileID, line: line)
    guard let owner = current.scope else { return HandedOffWork(.failed(ScopedError.outsideRoot(entry: nil))) }
    // A root's or a tenant's own values end with no outcome of a unit of work to wait for.
    guard owner.level == .scope else {
        return HandedOffWork(.failed(HandedOffWork.NotStarted(site: site, reason: .noScope)))
    }
    let scope = Scope(childOf: current, in: owner, handedOffAt: site) { _ in }
    let run = HandedOffWork.Run(scope: scope, timeout: timeout, operation: operation, at: site, waitingFor: start)
    if !owner.startAtEnd(run) {
        // The current scope is closing: whether it commits is being decided without this work.
        // (A rare race, so a task may carry the close: this call cannot wait.)
        Task { await run.skip(.scopeEnded) }
    }
    return HandedOffWork(.running(run))
}

/// Work handed off with ``handOff(timeout:fileID:line:operation:)``: await its ``value`` to
/// learn how it ended, or ``cancel()`` it.
public struct HandedOffWork: Sendable {
    fileprivate enum State: Sendable {
        case running(Run)
        /// Handed off outside every root: it never ran.
        case failed(any Error)
    }

    private let state: State

    fileprivate init(_ state: State) {
        self.state = state
    }

    /// Returns once the work has ended and its scope has closed, or once its timeout has
    /// passed and its scope has closed as ``ScopeOutcome/cancelled``, whichever comes first.
    ///
    /// Awaiting it does not hold the work, and cancelling the task that awaits it does not
    /// cancel the work (``cancel()`` does).
    ///
    /// - Throws: what the work threw; ``ScopeCloseError`` when the work returned and its scope
    ///   failed to close; ``ScopedError/timedOut(after:)`` when the timeout passed first;
    ///   ``ScopedError/outsideRoot(entry:)`` when it was handed off outside every root.
    public var value: Void {
        get async throws {
            switch state {
            case .running(let run): try await run.value()
            case .failed(let error): throw error
            }
        }
    }

    /// Cancels the work: its scope closes as ``ScopeOutcome/cancelled`` if it throws
    /// `CancellationError`.
    public func cancel() {
        if case .running(let run) = state { run.cancel() }
    }
}

extension HandedOffWork {
    /// The work, its scope and its deadline.
    ///
    /// One task runs the work and closes the scope; the deadline is an entry on the watchdog.
    /// Only a deadline that passes makes a second task, to
    /// close the scope as cancelled while the work, cancelled, may still run. Whichever of the
    /// work and its deadline ends first ends the work for any number of waiters.
    ///
    /// The work's task and the deadline capture only this object, so neither allocates a
    /// context of its own.
    final class Run: Sendable {
        private struct State {
            var deadline: DeadlineWatchdog.Deadline?
            var task: Task<Void, Never>?
            /// Cancelled before its task was set: the task is cancelled as it is set.
            var isCancelled = false
            /// The work or its deadline has taken the ending: the other does nothing.
            var isClaimed = false
            var result: Result<Void, any Error>?
            var waiters: [CheckedContinuation<Void, any Error>] = []
        }

        private let scope: Scope
        private let timeout: Duration
        private let operation: @Sendable () async throws -> Void
        /// Where the work was handed off.
        private let site: Site
        /// For work that waits for its scope's end: which end starts it; `nil` for work that
        /// starts at once.
        private let condition: Start?
        private let state = Mutex(State())

        init(
            scope: Scope,
            timeout: Duration,
            operation: @escaping @Sendable () async throws -> Void,
            at site: Site,
            waitingFor start: Start? = nil
        ) {
            self.scope = scope
            self.timeout = timeout
            self.operation = operation
            self.site = site
            condition = start
        }

        /// Starts the work waiting for its scope's end, or ends it unstarted: the scope it waited
        /// for ended, `committed` or not.
        ///
        /// Work cancelled while it waited never starts.
        nonisolated(nonsending) func scopeEnded(committed: Bool, outcome: ScopeOutcome) async {
            guard let condition else { return }
            if state.withLock({ $0.isCancelled }) { return await skip(.cancelled) }
            switch (condition, committed) {
            case (.afterCommit, true), (.afterRollback, false):
                start()
            case (.afterCommit, false):
                Logger.current.warning(
                    "Work handed off at \(site) to run after its scope's commit did not start: the scope ended with \(outcome) and did not commit",
                    metadata: ["handoff.site": "\(site)", "scope.outcome": "\(outcome)"]
                )
                scope.context.root.rootContext?.countNotStartedHandOff()
                await skip(.rolledBack)
            case (.afterRollback, true):
                await skip(.committed)
            }
        }

        /// Ends the work without running it: its scope closes as cancelled, having built
        /// nothing (so without suspending), and its value throws why.
        nonisolated(nonsending) func skip(_ reason: NotStarted.Reason) async {
            let claimed = state.withLock { state in
                defer { state.isClaimed = true }
                return !state.isClaimed
            }
            guard claimed else { return }
            try? await scope.close(.cancelled)
            finish(.failure(NotStarted(site: site, reason: reason)))
        }

        /// Registers the deadline, then starts the work's task.
        func start() {
            let deadline = DeadlineWatchdog.shared.register(after: timeout) { [self] in expire() }
            state.withLock { $0.deadline = deadline }
            // Made inside the scope's binding, the task inherits it: the work and the scope's
            // close run bound, with no async closure of their own for the binding.
            let task = ScopedValues.taskLocalNode.withValue(scope.values.node) { Task { [self] in await run() } }
            let cancel = state.withLock { state in
                state.task = task
                return state.isCancelled
            }
            if cancel { task.cancel() }
        }

        /// Runs the work in its scope, then closes the scope with how it ended, unless the
        /// deadline came first.
        ///
        /// Inlined into the task's closure: the work's task makes no frame of its own for it.
        @inline(__always)
        private func run() async {
            // The scope closes inside its own binding (the task's, from ``start()``), as
            // `withScope`'s does: its services close with no binding of their own.
            let result: Result<Void, any Error>
            do {
                try await operation()
                result = .success(())
            } catch {
                result = .failure(error)
            }
            let (claimed, deadline) = state.withLock { state in
                defer { state.isClaimed = true }
                return (!state.isClaimed, state.deadline)
            }
            if let deadline { DeadlineWatchdog.shared.cancel(deadline) }
            guard claimed else { return }  // the deadline's task closes the scope and says so
            switch result {
            case .success:
                do {
                    try await scope.close(.success)
                    finish(.success(()))
                } catch {
                    fail(with: error)
                }
            case .failure(let error):
                try? await scope.close(ScopeOutcome(endingWith: error))
                fail(with: error)
            }
        }

        /// The deadline passed: cancels the work, and closes its scope as cancelled without
        /// waiting for it, unless the work ended first.
        private func expire() {
            let (claimed, task) = state.withLock { state in
                defer {
                    state.isClaimed = true
                    state.isCancelled = true
                }
                return (!state.isClaimed, state.task)
            }
            guard claimed else { return }
            task?.cancel()
            Task { [self] in
                try? await scope.close(.cancelled)
                fail(with: ScopedError.timedOut(after: timeout))
            }
        }

        /// Ends the work with `error`, after logging it with its site and counting it on the
        /// root: work handed off is not awaited by its request, so its failure is said here.
        @inline(never)
        private func fail(with error: any Error) {
            Logger.current.warning(
                "Work handed off at \(site) failed: \(error)",
                metadata: ["handoff.site": "\(site)", "error.type": "\(String(reflecting: type(of: error)))"]
            )
            scope.context.root.rootContext?.countFailedHandOff()
            finish(.failure(error))
        }

        /// Cancels the work.
        func cancel() {
            let task = state.withLock { state in
                state.isCancelled = true
                return state.task
            }
            task?.cancel()
        }

        /// Records how the work ended and resumes every waiter.
        ///
        /// Never inlined: its copies of the resilient `CheckedContinuation` would be buffers
        /// that the work's async closure allocates from its task on every run, one per call site.
        @inline(never)
        private func finish(_ result: Result<Void, any Error>) {
            let waiters = state.withLock { state in
                state.result = result
                state.task = nil
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume(with: result) }
        }

        /// How the work ended, once it has.
        func value() async throws {
            try await withCheckedThrowingContinuation { continuation in
                let result = state.withLock { state in
                    if state.result == nil { state.waiters.append(continuation) }
                    return state.result
                }
                if let result { continuation.resume(with: result) }
            }
        }
    }
}

extension HandedOffWork {
    /// Which end of the current scope starts work handed off with
    /// ``handOff(_:timeout:fileID:line:operation:)``.
    public enum Start: Sendable, Hashable {
        /// Once the scope ended with ``ScopeOutcome/success`` and every service it built closed
        /// without throwing: its transaction committed.
        case afterCommit
        /// Once the scope ended any other way: its work threw or was cancelled, or a service's
        /// close threw (a commit that failed).
        case afterRollback
    }

    /// Why work handed off to start at its scope's end never started: what its
    /// ``HandedOffWork/value`` throws.
    public struct NotStarted: Error, Sendable, Hashable, CustomStringConvertible {
        /// Why the work did not start.
        public enum Reason: Sendable, Hashable {
            /// After-rollback work, and the scope committed.
            case committed
            /// After-commit work, and the scope did not commit.
            case rolledBack
            /// Cancelled with ``HandedOffWork/cancel()`` before its scope ended.
            case cancelled
            /// Handed off while its scope was closing already.
            case scopeEnded
            /// Handed off in a root's or a tenant's own values: no scope to wait for.
            case noScope
        }

        /// Where the work was handed off.
        public let site: Site
        /// Why it did not start.
        public let reason: Reason

        /// `"work handed off at MyApp/Orders.swift:12 did not start: its scope did not commit"`.
        public var description: String {
            let why: String
            switch reason {
            case .committed: why = "its scope committed, and it was to run after a rollback"
            case .rolledBack: why = "its scope did not commit"
            case .cancelled: why = "it was cancelled first"
            case .scopeEnded: why = "its scope was closing already"
            case .noScope: why = "it was handed off outside every scope of a root, with no scope to wait for"
            }
            return "work handed off at \(site) did not start: \(why)"
        }
    }
}

extension HandedOffWork {
    /// Where work was handed off: the call of ``handOff(timeout:fileID:line:operation:)``, as a
    /// ``ScopeObserver`` is told it when the work's scope opens.
    public struct Site: Sendable, Hashable, CustomStringConvertible {
        /// The file of the call, as `#fileID` names it (`"MyApp/Jobs.swift"`).
        public let fileID: String
        /// The line of the call.
        public let line: Int

        /// `"MyApp/Jobs.swift:12"`.
        public var description: String { "\(fileID):\(line)" }
    }
}
