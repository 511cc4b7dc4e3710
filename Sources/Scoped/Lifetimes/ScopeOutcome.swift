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
