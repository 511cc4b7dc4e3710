/// One step of the schema: statements applied once, in one transaction, at start-up.
///
/// Migrations are applied in `version` order and recorded in the table `scoped_migrations`,
/// each in its own transaction with its record, under a PostgreSQL advisory lock: instances
/// that start at once apply each migration exactly once, and a migration that fails leaves
/// nothing behind.
public struct PostgresMigration: Sendable, Hashable {
    /// The migration's place in the order; never reuse one.
    public var version: Int
    /// A name for logs.
    public var name: String
    /// The statements, run one at a time (PostgreSQL's extended protocol takes one per query).
    public var statements: [String]

    /// A migration.
    ///
    /// - Parameters:
    ///   - version: its place in the order.
    ///   - name: a name for logs.
    ///   - statements: the statements it runs.
    public init(version: Int, name: String, statements: [String]) {
        self.version = version
        self.name = name
        self.statements = statements
    }
}
