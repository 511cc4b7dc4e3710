/// How to open a ``SQLiteDatabase``.
public struct SQLiteConfiguration: Sendable, Hashable {
    /// How hard SQLite works to make a commit survive a power loss (`PRAGMA synchronous`).
    public enum Synchronous: String, Sendable, Hashable, CaseIterable {
        /// No syncs: fastest, and a power loss may lose or corrupt recent commits.
        case off = "OFF"
        /// In WAL mode, a commit may be lost on power loss but the database stays consistent.
        case normal = "NORMAL"
        /// Every commit is synced to disk before it returns: the durable default.
        case full = "FULL"
        /// As `full`, and the directory is synced too.
        case extra = "EXTRA"

        /// The statement that applies this setting: a fixed text, so no value is spliced into SQL.
        var pragmaStatement: String {
            switch self {
            case .off: "PRAGMA synchronous = OFF"
            case .normal: "PRAGMA synchronous = NORMAL"
            case .full: "PRAGMA synchronous = FULL"
            case .extra: "PRAGMA synchronous = EXTRA"
            }
        }

        /// The value `PRAGMA synchronous` reads back for this setting.
        public var pragmaValue: Int {
            switch self {
            case .off: 0
            case .normal: 1
            case .full: 2
            case .extra: 3
            }
        }
    }

    /// The database file; its parent folders are created if missing.
    public var path: String
    /// How many reader connections to keep; the one writer is always there.
    ///
    /// Default 4.
    public var readers: Int
    /// Durability of commits.
    ///
    /// Default ``Synchronous/full``.
    public var synchronous: Synchronous
    /// How long to keep retrying, asynchronously, when another process holds the database's write lock, before failing
    /// with ``SQLiteError/Code/busy``.
    ///
    /// Default 5 seconds.
    public var busyTimeout: Duration
    /// Opens the file read-only: every write fails with ``SQLiteError/Code/readOnly``.
    public var readOnly: Bool
    /// The migrations to apply at open, in version order.
    public var migrations: [SQLiteMigration]
    /// How long a session waits for a connection (a reader, or the writer behind other
    /// writers) before failing with `DatabaseTimeoutError`.
    ///
    /// Default 5 seconds.
    public var leaseTimeout: Duration
    /// How long a statement, a commit or a rollback may run before it is interrupted, its
    /// connection discarded, and it fails with `DatabaseTimeoutError`.
    ///
    /// Default 10 seconds.
    public var statementTimeout: Duration

    /// A configuration for the database at `path`; every other setting has its durable default.
    public init(
        path: String,
        readers: Int = 4,
        synchronous: Synchronous = .full,
        busyTimeout: Duration = .seconds(5),
        readOnly: Bool = false,
        migrations: [SQLiteMigration] = [],
        leaseTimeout: Duration = .seconds(5),
        statementTimeout: Duration = .seconds(10)
    ) {
        self.path = path
        self.readers = readers
        self.synchronous = synchronous
        self.busyTimeout = busyTimeout
        self.readOnly = readOnly
        self.migrations = migrations
        self.leaseTimeout = leaseTimeout
        self.statementTimeout = statementTimeout
    }

    /// What makes this configuration unusable, named by its field; `nil` when it can be opened.
    var problem: String? {
        if path.isEmpty { return "`path` is empty" }
        if readers < 1 { return "`readers` is \(readers); it must be at least 1" }
        if leaseTimeout <= .zero { return "`leaseTimeout` must be positive" }
        if statementTimeout <= .zero { return "`statementTimeout` must be positive" }
        let versions = migrations.map(\.version)
        if let bad = versions.first(where: { $0 < 1 }) { return "migration version \(bad) must be positive" }
        if Set(versions).count != versions.count { return "two migrations share a version" }
        return nil
    }
}
