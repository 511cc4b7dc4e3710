import Synchronization

extension DeadlineWatchdog {
    /// Runs `operation` in a task of its own and returns when it ends; or, once it has run for
    /// `timeout` (enforced at most ``tick`` late), cancels it and throws `timeoutError()` without
    /// waiting for it to notice.
    ///
    /// For work its caller must be able to stop waiting for: a service's close bounded by a
    /// timeout, a bounded shutdown, a test database's close whose driver may never answer. (Work
    /// handed off past a response runs in one task and ends at its deadline without this: see
    /// ``handOff(timeout:fileID:line:operation:)``.)
    ///
    /// Work that ignores cancellation cannot hold its caller (a scope, a shutdown) past its
    /// timeout. Cancelling the calling task cancels the operation. The operation's task
    /// inherits the caller's task-locals, so it runs in the caller's scope.
    ///
    /// Never inlined: its `Race` state holds a resilient `CheckedContinuation`, a buffer that an
    /// async caller which inlined it would allocate from its task on every call, also when the
    /// call takes another path (a scope's end whose services bound their own closes).
    ///
    /// - Parameters:
    ///   - operation: The work.
    ///   - timeout: How long to wait for it.
    ///   - timeoutError: What to throw when `timeout` passes first.
    /// - Returns: What `operation` returns.
    /// - Throws: What `operation` throws when it ends first; `timeoutError()` when the timeout
    ///   passes first.
    @inline(never)
    public func run<R: Sendable>(
        _ operation: @escaping @Sendable () async throws -> R,
        abandoningAfter timeout: Duration,
        timeoutError: @escaping @Sendable () -> any Error
    ) async throws -> R {
        let race = Race<R>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                race.start(continuation)
                let work = Task {
                    do {
                        race.finish(.success(try await operation()))
                    } catch {
                        race.finish(.failure(error))
                    }
                }
                race.setWork(work)
                // The watchdog's timer, not a timer task: a request's bounded close creates one
                // task, not two, and wakes nothing when the work ends in time.
                let deadline = register(after: timeout) {
                    if race.finish(.failure(timeoutError())) { work.cancel() }
                }
                race.onFinish { [self] in cancel(deadline) }
            }
        } onCancel: {
            race.cancelWork()
        }
    }
}

/// The first of the work and its deadline to finish resumes the waiter; the other is ignored.
private final class Race<R: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<R, any Error>?
        var finished = false
        var onFinish: (@Sendable () -> Void)?
        var work: Task<Void, Never>?
        var isCancelled = false
    }

    private let state = Mutex(State())

    func start(_ continuation: CheckedContinuation<R, any Error>) {
        state.withLock { $0.continuation = continuation }
    }

    /// Keeps the work's task, so that cancelling the caller reaches it; cancels it at once if
    /// the caller was cancelled before it existed.
    func setWork(_ work: Task<Void, Never>) {
        let cancelled = state.withLock { state in
            state.work = work
            return state.isCancelled
        }
        if cancelled { work.cancel() }
    }

    /// Cancels the work: the caller was cancelled.
    func cancelWork() {
        let work = state.withLock { state in
            state.isCancelled = true
            return state.work
        }
        work?.cancel()
    }

    /// Runs `action` once the race has finished: now if it already has.
    func onFinish(_ action: @escaping @Sendable () -> Void) {
        let finished = state.withLock { state in
            if !state.finished { state.onFinish = action }
            return state.finished
        }
        if finished { action() }
    }

    /// Resumes the waiter with `result` if nothing finished before; returns whether it did.
    @discardableResult
    func finish(_ result: Result<R, any Error>) -> Bool {
        let won = state.withLock { state -> (CheckedContinuation<R, any Error>?, (@Sendable () -> Void)?)? in
            guard !state.finished else { return nil }
            state.finished = true
            defer {
                state.continuation = nil
                state.onFinish = nil
                state.work = nil
            }
            return (state.continuation, state.onFinish)
        }
        guard let (continuation, action) = won else { return false }
        continuation?.resume(with: result)
        action?()
        return true
    }
}
