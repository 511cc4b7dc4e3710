/// A database entry cannot be built from its configuration: none was set, or a value in it
/// is invalid.
///
/// Thrown by ScopedSQLite's `sqliteDatabase` and ScopedPostgres's `postgresDatabase` when they
/// are first read, and so by `ScopeRoot.validate()` at start-up. It names the entry, what is
/// wrong, and how to set it.
public struct DatabaseConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The entry that could not be built, such as `sqliteDatabase`.
    public var entry: String
    /// What is wrong: "no configuration", say.
    public var problem: String
    /// How to set it, such as "set `$0.sqliteConfiguration` on the application root".
    public var fix: String

    /// Creates the error for `entry`.
    public init(entry: String, problem: String, fix: String) {
        self.entry = entry
        self.problem = problem
        self.fix = fix
    }

    /// The error for an entry read on a root that did not set `configurationEntry`.
    public static func missing(entry: String, configurationEntry: String) -> Self {
        Self(
            entry: entry,
            problem: "no database configured",
            fix: "set `$0.\(configurationEntry)` on the application root"
        )
    }

    /// "sqliteDatabase: no database configured; set `$0.sqliteConfiguration` on the application
    /// root", and the like.
    public var description: String { "\(entry): \(problem); \(fix)" }
}
