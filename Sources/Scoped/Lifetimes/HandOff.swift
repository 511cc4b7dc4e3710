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
        scope = Scope(childOf: current, in: try current.parentScope(), label: "work handed off at \(fileID):\(line)") {
            _ in
        }
    } catch {
        // Outside every root: nothing to run the work in, and nothing would wait for it.
        return HandedOffWork(failed: error)
    }
    // One task runs the work and closes its scope; the deadline is an entry on the watchdog.
    // Only a deadline that passes makes a second task, to close the scope while the work,
    // cancelled, may still run.
    let ending = HandedOffWork.Ending()
    let deadline = DeadlineWatchdog.shared.register(after: timeout) {
        guard ending.expire() else { return }
        Task {
            try? await scope.close(.cancelled)
            ending.finish(.failure(ScopedError.timedOut(after: timeout)))
        }
    }
    ending.setWork(
        Task {
            let result: Result<Void, any Error>
            do {
                try await scope.run(operation)
                result = .success(())
            } catch {
                result = .failure(error)
            }
            DeadlineWatchdog.shared.cancel(deadline)
            // The deadline passed first: its task closes the scope and says so.
            guard ending.claim() else { return }
            switch result {
            case .success:
                do {
                    try await scope.close(.success)
                    ending.finish(.success(()))
                } catch {
                    ending.finish(.failure(error))
                }
            case .failure(let error):
                try? await scope.close(ScopeOutcome(endingWith: error))
                ending.finish(.failure(error))
            }
        }
    )
    return HandedOffWork(ending: ending)
}

/// Work handed off with ``handOff(timeout:fileID:line:operation:)``: await its ``value`` to
/// learn how it ended, or ``cancel()`` it.
public struct HandedOffWork: Sendable {
    private let ending: Ending

    fileprivate init(ending: Ending) {
        self.ending = ending
    }

    fileprivate init(failed error: any Error) {
        ending = Ending()
        _ = ending.claim()
        ending.finish(.failure(error))
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
        get async throws { try await ending.value() }
    }

    /// Cancels the work: its scope closes as ``ScopeOutcome/cancelled`` if it throws
    /// `CancellationError`.
    public func cancel() {
        ending.cancelWork()
    }
}

extension HandedOffWork {
    /// How the work ended, set once by whichever of the work and its deadline ends it first, and
    /// awaited by any number of tasks.
    fileprivate final class Ending: Sendable {
        private struct State {
            /// The work or its deadline has taken the ending: the other does nothing.
            var isClaimed = false
            var result: Result<Void, any Error>?
            var waiters: [CheckedContinuation<Void, any Error>] = []
            var work: Task<Void, Never>?
            /// Cancelled before its task was set: the task is cancelled as it is set.
            var isCancelled = false
        }

        private let state = Mutex(State())

        /// Keeps the work's task, for ``HandedOffWork/cancel()`` and the deadline; cancels it at
        /// once if either came first.
        func setWork(_ work: Task<Void, Never>) {
            let cancel = state.withLock { state in
                state.work = work
                return state.isCancelled
            }
            if cancel { work.cancel() }
        }

        /// Cancels the work.
        func cancelWork() {
            let work = state.withLock { state in
                state.isCancelled = true
                return state.work
            }
            work?.cancel()
        }

        /// Takes the ending for the work; `false` when the deadline took it.
        func claim() -> Bool {
            state.withLock { state in
                defer { state.isClaimed = true }
                return !state.isClaimed
            }
        }

        /// Takes the ending for the deadline and cancels the work; `false` when the work took
        /// it.
        func expire() -> Bool {
            guard claim() else { return false }
            cancelWork()
            return true
        }

        /// Records how the work ended and resumes every waiter.
        func finish(_ result: Result<Void, any Error>) {
            let waiters = state.withLock { state in
                state.result = result
                state.work = nil
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
