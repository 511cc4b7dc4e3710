import Scoped
import Synchronization

/// A result delivered once, by whoever has it first (a statement's future, a lease's task, a
/// deadline, a cancellation), and awaited by one task: what the session waits on instead of a
/// task of its own.
final class HandOver<Value: Sendable>: Sendable {
    private enum State {
        case empty
        case waiting(CheckedContinuation<Value, any Error>)
        case delivered(Result<Value, any Error>)
        /// The waiter has its result.
        case taken
    }
    private let state = Mutex<State>(.empty)

    /// Delivers `result` unless a result was delivered already (the first wins).
    ///
    /// - Returns: whether `result` was delivered.
    @discardableResult
    func deliver(_ result: Result<Value, any Error>) -> Bool {
        let (accepted, waiting) = state.withLock { state -> (Bool, CheckedContinuation<Value, any Error>?) in
            switch state {
            case .empty:
                state = .delivered(result)
                return (true, nil)
            case .waiting(let continuation):
                state = .taken
                return (true, continuation)
            case .delivered, .taken:
                return (false, nil)
            }
        }
        waiting?.resume(with: result)
        return accepted
    }

    /// The result, once delivered.
    func value() async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            let delivered = state.withLock { state -> Result<Value, any Error>? in
                guard case .delivered(let result) = state else {
                    state = .waiting(continuation)
                    return nil
                }
                state = .taken
                return result
            }
            if let delivered { continuation.resume(with: delivered) }
        }
    }

    /// The result, or `timeoutError()` when none was delivered within `timeout` (a deadline on
    /// the watchdog, cancelled when the result comes first).
    func value(within timeout: Duration, timeoutError: @escaping @Sendable () -> any Error) async throws -> Value {
        let deadline = DeadlineWatchdog.shared.register(after: timeout) { [self] in
            deliver(.failure(timeoutError()))
        }
        defer { DeadlineWatchdog.shared.cancel(deadline) }
        return try await value()
    }
}
