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
///   what the work throws ends there, and in the outcome its scope's services are told. Outside
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
    let scope: Scope
    do {
        scope = Scope(
            childOf: current,
            in: try current.parentScope(),
            handedOffAt: HandedOffWork.Site(fileID: fileID, line: line)
        ) {
            _ in
        }
    } catch {
        // Outside every root: nothing to run the work in, and nothing would wait for it.
        return HandedOffWork(.failed(error))
    }
    let run = HandedOffWork.Run(scope: scope, timeout: timeout, operation: operation)
    run.start()
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
    fileprivate final class Run: Sendable {
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
        private let state = Mutex(State())

        init(scope: Scope, timeout: Duration, operation: @escaping @Sendable () async throws -> Void) {
            self.scope = scope
            self.timeout = timeout
            self.operation = operation
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
                    finish(.failure(error))
                }
            case .failure(let error):
                try? await scope.close(ScopeOutcome(endingWith: error))
                finish(.failure(error))
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
                finish(.failure(ScopedError.timedOut(after: timeout)))
            }
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
