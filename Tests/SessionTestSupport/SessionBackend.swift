import Logging
import PostgresNIO
public import Scoped
import ScopedDatabase
public import ScopedPostgres
public import ScopedSQLite
import ScopedServiceLifecycle
import ScopedTenants
import ScopedTestSupport
public import Testing

/// What the shared session tests ask of a session, written once per database layer.
public protocol SessionUnderTest: Sendable {
    /// Inserts an item; returns the rows changed.
    func insert(_ name: String) async throws -> Int
    /// Appends `!` to every item's name; returns the rows changed.
    func renameAll() async throws -> Int
    /// Every item's name, sorted.
    func names() async throws -> [String]
    /// A statement that runs for much longer than the tests' statement timeout.
    func runSlowStatement() async throws
    /// Ends the session as its scope would.
    func finish(_ outcome: ScopeOutcome) async throws
}

extension SQLiteSession: SessionUnderTest {
    /// Inserts an item; returns the rows changed.
    public func insert(_ name: String) async throws -> Int {
        try await execute("INSERT INTO items (name) VALUES (\(name))")
    }

    /// Appends `!` to every item's name; returns the rows changed.
    public func renameAll() async throws -> Int {
        try await execute("UPDATE items SET name = name || '!'")
    }

    /// Every item's name, sorted.
    public func names() async throws -> [String] {
        try await query("SELECT name FROM items ORDER BY name").map { try $0.get("name", as: String.self) }
    }

    /// A statement that runs for much longer than the tests' statement timeout.
    public func runSlowStatement() async throws {
        _ = try await query(
            "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 300000000) SELECT count(*) FROM n"
        )
    }
}

extension PostgresSession: SessionUnderTest {
    /// Inserts an item; returns the rows changed.
    public func insert(_ name: String) async throws -> Int {
        try await execute("INSERT INTO items (name) VALUES (\(name))")
    }

    /// Appends `!` to every item's name; returns the rows changed.
    public func renameAll() async throws -> Int {
        try await execute("UPDATE items SET name = name || '!'")
    }

    /// Every item's name, sorted.
    public func names() async throws -> [String] {
        try await query("SELECT name FROM items ORDER BY name").map { try $0.decode(String.self) }
    }

    /// A statement that runs for much longer than the tests' statement timeout.
    public func runSlowStatement() async throws {
        _ = try await query("SELECT pg_sleep(30)")
    }
}

/// A database layer the shared session tests run on: each test runs once per backend.
public enum SessionBackend: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite, postgres

    /// The backend's name in test reports.
    public var testDescription: String { rawValue }

    /// The backends tests run on here: PostgreSQL where a server can be had, and in CI always.
    public static let available: [Self] = PostgresTestServer.isEnabled ? allCases : [.sqlite]

    /// The session entry's name, which its errors carry.
    public var sessionEntry: String { self == .sqlite ? "sqliteSession" : "postgresSession" }

    /// The database entry's name.
    public var databaseEntry: String { self == .sqlite ? "sqliteDatabase" : "postgresDatabase" }

    /// The current scope's session.
    public func session() async throws -> any SessionUnderTest {
        switch self {
        case .sqlite: try await ScopedValues.current.sqliteSession
        case .postgres: try await ScopedValues.current.postgresSession
        }
    }

    /// How many of the database's connections are leased now, read in a scope of the root.
    public func leased() async throws -> Int {
        switch self {
        case .sqlite: try await ScopedValues.current.sqliteDatabase.statistics().leased
        case .postgres: try await ScopedValues.current.postgresDatabase.statistics().leased
        }
    }

    /// Whether the server runs a session's slow statement (`runSlowStatement`) now, read in a
    /// scope of the root: on PostgreSQL from `pg_stat_activity`; on SQLite, whether a
    /// connection is leased.
    public func slowStatementRuns() async throws -> Bool {
        switch self {
        case .sqlite:
            return try await leased() == 1
        case .postgres:
            let rows = try await ScopedValues.current.postgresSession.query(
                "SELECT count(*)::int8 FROM pg_stat_activity WHERE state = 'active' AND query = 'SELECT pg_sleep(30)'"
            )
            return try rows[0].decode(Int.self) > 0
        }
    }

    /// A root without a database configured, registering the backend's services.
    public func unconfiguredRoot() -> ScopeRoot {
        switch self {
        case .sqlite: ScopeRoot(services: [SQLiteDatabaseKey.self, SQLiteSessionKey.self]) { _ in }
        case .postgres:
            ScopeRoot(services: [PostgresClientKey.self, PostgresDatabaseKey.self, PostgresSessionKey.self]) { _ in }
        }
    }

    /// Runs `body` with a validated root on a new database holding an empty `items` table
    /// (`name` unique), then shuts the root down.
    ///
    /// Tests that queue many writers at once raise `leaseTimeout`: on SQLite they take turns on
    /// one writer.
    public func withRoot<R: Sendable>(
        statementTimeout: Duration = .seconds(10),
        leaseTimeout: Duration = .seconds(5),
        _ body: (ScopeRoot) async throws -> R
    ) async throws -> R {
        try await withUnstartedRoot(statementTimeout: statementTimeout, leaseTimeout: leaseTimeout) { root in
            try await root.withRunningServices(logger: Logger(label: "test")) {
                let problems = await root.validate()
                try #require(problems.isEmpty, "\(problems)")
                return try await body(root)
            }
        }
    }

    /// Runs `body` with a root on a new database holding an empty `items` table (`name`
    /// unique), neither validated nor running its services: for a test whose application gives
    /// the root its life (validation, running services, shutdown).
    public func withUnstartedRoot<R: Sendable>(
        statementTimeout: Duration = .seconds(10),
        leaseTimeout: Duration = .seconds(5),
        _ body: (ScopeRoot) async throws -> R
    ) async throws -> R {
        try await withRootMaker(statementTimeout: statementTimeout, leaseTimeout: leaseTimeout) { makeRoot in
            try await body(makeRoot { _ in })
        }
    }

    /// Runs `body` with a maker of roots on one new database holding an empty `items` table.
    ///
    /// Each root it makes is new, with the database's configuration and what the `update` it is
    /// given sets, neither validated nor running its services: for a test that reloads a root
    /// from the same configuration. The table's `name` is unique.
    public func withRootMaker<R: Sendable>(
        statementTimeout: Duration = .seconds(10),
        leaseTimeout: Duration = .seconds(5),
        _ body: (_ makeRoot: @Sendable (@escaping @Sendable (inout ScopedValues) -> Void) -> ScopeRoot) async throws ->
            R
    ) async throws -> R {
        switch self {
        case .sqlite:
            let folder = try TemporaryFolder()
            let configuration = SQLiteConfiguration(
                path: folder.path("items.sqlite"),
                readers: 2,
                migrations: [
                    SQLiteMigration(
                        version: 1,
                        name: "items",
                        statements: ["CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)"]
                    )
                ],
                leaseTimeout: leaseTimeout,
                statementTimeout: statementTimeout
            )
            // The folder, and the database in it, outlive `body`.
            defer { withExtendedLifetime(folder) {} }
            return try await body { update in
                // Tenants open with the root's values: the adapters' tenant resolvers are tested on it.
                ScopeRoot(services: [SQLiteDatabaseKey.self, SQLiteSessionKey.self], observers: [Tenancy()]) {
                    $0.sqliteConfiguration = configuration
                    update(&$0)
                }
            }
        case .postgres:
            var configuration = try await PostgresConfiguration(
                url: try PostgresTestServer.shared().makeDatabase().url,
                migrations: [
                    PostgresMigration(
                        version: 1,
                        name: "items",
                        statements: ["CREATE TABLE items (id serial PRIMARY KEY, name text NOT NULL UNIQUE)"]
                    )
                ]
            )
            configuration.statementTimeout = statementTimeout
            configuration.leaseTimeout = leaseTimeout
            return try await body { [configuration] update in
                ScopeRoot(
                    services: [PostgresClientKey.self, PostgresDatabaseKey.self, PostgresSessionKey.self],
                    observers: [Tenancy()]
                ) {
                    $0.postgresConfiguration = configuration
                    update(&$0)
                }
            }
        }
    }
}
