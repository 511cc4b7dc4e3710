/// One step of a database's schema history, applied once, in a transaction, at open.
///
/// Migrations are ordered by ``version``; the database records the last one applied in
/// `PRAGMA user_version`, so each runs exactly once per file.
public struct SQLiteMigration: Sendable, Hashable {
    /// The version the database is at once this migration is applied; unique and positive.
    public let version: Int
    /// A name for messages: what the migration does.
    public let name: String
    /// The SQL script that applies it.
    public let script: String

    /// A migration to `version`, applied by running `script`.
    public init(version: Int, name: String, script: String) {
        self.version = version
        self.name = name
        self.script = script
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
