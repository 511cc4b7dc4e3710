/// A wait on the database ran past its deadline: the request is refused rather than held.
///
/// Thrown by ScopedSQLite and ScopedPostgres sessions when a connection was not free in time,
/// or a statement, commit or rollback did not finish in time. The connection involved is
/// discarded, never returned in an unknown state, and the scope ends as a failure. A server
/// answers it with 503 Service Unavailable.
public struct DatabaseTimeoutError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was waited for.
    public enum Operation: String, Sendable, Hashable {
        /// A connection: from the pool, or the session's own while another statement of the
        /// session runs on it.
        case lease
        /// A statement.
        case statement
        /// The commit or rollback that ends a session.
        case finish
    }

    /// What was waited for.
    public var operation: Operation
    /// How long it was waited for.
    public var timeout: Duration
    /// The session's entry, such as `sqliteSession`.
    public var entry: String

    /// Creates the error for `operation` on `entry` after `timeout`.
    public init(operation: Operation, timeout: Duration, entry: String) {
        self.operation = operation
        self.timeout = timeout
        self.entry = entry
    }

    /// "sqliteSession: no connection within 2.0 seconds", and the like.
    public var description: String {
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        let what =
            switch operation {
            case .lease: "no connection within"
            case .statement: "a statement ran longer than"
            case .finish: "the commit or rollback ran longer than"
            }
        return "\(entry): \(what) \(seconds) seconds"
    }
}
