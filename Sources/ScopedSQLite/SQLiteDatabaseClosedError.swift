/// The database was closed: no connection can be leased any more.
public struct SQLiteDatabaseClosedError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A description for logs and error messages.
    public var description: String { "The SQLite database is closed." }
}
