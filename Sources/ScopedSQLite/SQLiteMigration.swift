/// One step of a database's schema history, applied once, in a transaction, at open.
///
/// Migrations are ordered by ``version``; the database records the last one applied in
/// `PRAGMA user_version`, so each runs exactly once per file.
public struct SQLiteMigration: Sendable, Hashable {
    /// The version the database is at once this migration is applied; unique and positive.
    public let version: Int
    /// A name for messages: what the migration does.
    public let name: String
    /// The statements that apply it, run in order in one transaction; each may hold several
    /// statements separated by semicolons.
    public let statements: [String]

    /// A migration to `version`, applied by running `statements` in order.
    ///
    /// - Parameters:
    ///   - version: its place in the order; unique and positive.
    ///   - name: what it does, for messages.
    ///   - statements: the SQL it runs.
    public init(version: Int, name: String, statements: [String]) {
        self.version = version
        self.name = name
        self.statements = statements
    }
}

/// A migration failed: the database stays at the version before it.
public struct SQLiteMigrationError: Error, CustomStringConvertible {
    /// The version of the migration that failed.
    public let version: Int
    /// The name of the migration that failed.
    public let name: String
    /// The version the database is still at.
    public let currentVersion: Int
    /// What SQLite reported.
    public let underlying: any Error

    /// A description for logs and error messages.
    public var description: String {
        "Migration \(version) '\(name)' failed; the database stays at version \(currentVersion): \(underlying)"
    }
}
