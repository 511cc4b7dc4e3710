/// A request scope ended well, but a query of its Fluent transaction had failed: the
/// transaction was rolled back, not committed.
///
/// Thrown by the scope's close, so the request fails with it (a 500 unless a middleware maps
/// it), even when the handler caught the query's error: on PostgreSQL a failed statement
/// aborts the transaction, and its commit would roll back without a word.
public struct FluentRollbackError: Error, CustomStringConvertible {
    /// The error of the first query that failed.
    public let underlying: any Error

    /// Says what was rolled back and why.
    public var description: String {
        "a query of the request's transaction failed, so it was rolled back, not committed: \(underlying)"
    }
}

/// A SQL statement reached a database of the scope that is not a SQL database.
enum ScopedFluentError: Error {
    case notSQL
}
