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
