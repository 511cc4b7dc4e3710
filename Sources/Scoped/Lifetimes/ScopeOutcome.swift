/// How a scope's operation ended, as told to the services it built when they close.
///
/// A request session commits on ``success`` and rolls back on ``failure(_:)`` and ``cancelled``.
public enum ScopeOutcome: Sendable, CustomStringConvertible {
    /// The operation returned a value.
    case success
    /// The operation threw this error.
    case failure(any Error)
    /// The operation was cancelled: it threw `CancellationError`, or threw while its task was
    /// cancelled. Validation also closes its synthetic scope as cancelled.
    case cancelled

    /// The outcome of an operation that threw `error`: ``cancelled`` for a
    /// `CancellationError` or any error thrown while the task was cancelled, else
    /// ``failure(_:)``.
    ///
    /// Never inlined: `is CancellationError` needs a buffer of the standard library's
    /// resilient `CancellationError`, which an async function that inlined it would allocate
    /// from its task on every call, whichever path the call takes.
    @inline(never)
    public init(endingWith error: any Error) {
        self = error is CancellationError || Task.isCancelled ? .cancelled : .failure(error)
    }

    /// Whether the operation returned normally.
    public var isSuccess: Bool {
        if case .success = self { return true }
        return false
    }

    /// The outcome's case name, without the error: `success`, `failure` or `cancelled`; what
    /// metrics and spans record.
    public var name: String {
        switch self {
        case .success: "success"
        case .failure: "failure"
        case .cancelled: "cancelled"
        }
    }

    /// A description for logs and error messages.
    public var description: String {
        switch self {
        case .failure(let error): "failure(\(error))"
        default: name
        }
    }
}

/// Services that threw while their scope closed.
///
/// Thrown by `withScope` when the operation succeeded but a close failed, so that a request
/// whose transaction did not commit never reports success. When the operation itself threw,
/// its error is rethrown unchanged and this error goes to the root's close-error handler.
public struct ScopeCloseError: Error, CustomStringConvertible {
    /// One service whose close threw.
    public struct Failure: Sendable {
        /// The service's name.
        public let entry: String
        /// What its close threw.
        public let error: any Error
    }

    /// Every close that threw, in the order they ran (newest service first).
    public let failures: [Failure]
    /// How the scope's operation ended.
    public let outcome: ScopeOutcome

    /// A description for logs and error messages.
    public var description: String {
        let list = failures.map { "\($0.entry): \($0.error)" }.joined(separator: "; ")
        return "Closing the scope (outcome: \(outcome)) failed for \(failures.count) service(s): \(list)"
    }
}

extension ScopeCloseError {
    /// A service's close ran past its close timeout and was abandoned, so its scope could end.
    ///
    /// It is reported like any close failure: thrown in a ``ScopeCloseError`` when the scope ended
    /// well (what the close was to do, such as a commit, may not have happened), and given to the
    /// root's `onCloseError` otherwise. The abandoned close goes on running in its own task.
    public struct Timeout: Error, Sendable, Hashable, CustomStringConvertible {
        /// The service's entry name.
        public var entry: String
        /// How long its close was waited for.
        public var timeout: Duration

        /// Creates the error for `entry`'s close, abandoned after `timeout`.
        public init(entry: String, timeout: Duration) {
            self.entry = entry
            self.timeout = timeout
        }

        /// "the close of postgresClient did not return within 5.0 seconds and was abandoned".
        public var description: String {
            let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
            return "the close of \(entry) did not return within \(seconds) seconds and was abandoned"
        }
    }
}
