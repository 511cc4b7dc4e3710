import Logging
import PostgresNIO
import Scoped
import ScopedPostgres
import ScopedServiceLifecycle
import ScopedTestSupport
import Testing

/// The schema the tests use: one table, `items`, and one that references it.
let itemMigrations = [
    PostgresMigration(
        version: 1,
        name: "items",
        statements: [
            "CREATE TABLE items (id serial PRIMARY KEY, name text NOT NULL UNIQUE)",
            "CREATE TABLE tags (item_id integer NOT NULL REFERENCES items(id), tag text NOT NULL)",
        ]
    )
]

/// A database of its own on the test server, migrated by a root that runs its client.
struct PostgresFixture {
    let server: PostgresTestServer
    let url: String
    let database: String

    /// A new database on `server`, by default the process's shared test server.
    init(server: PostgresTestServer? = nil) async throws {
        if let server {
            self.server = server
        } else {
            self.server = try await PostgresTestServer.shared()
        }
        let created = try await self.server.makeDatabase()
        url = created.url
        database = created.name
    }

    /// A root on the fixture's database.
    func makeRoot(
        maximumConnections: Int = 20,
        leaseTimeout: Duration = .seconds(5),
        statementTimeout: Duration? = nil,
        migrations: [PostgresMigration] = itemMigrations
    ) throws -> ScopeRoot {
        var configuration = try PostgresConfiguration(
            url: url,
            maximumConnections: maximumConnections,
            migrations: migrations
        )
        configuration.leaseTimeout = leaseTimeout
        if let statementTimeout { configuration.statementTimeout = statementTimeout }
        return ScopeRoot(services: [PostgresClientKey.self, PostgresDatabaseKey.self, PostgresSessionKey.self]) {
            $0.postgresConfiguration = configuration
        }
    }

    /// Runs `body` with a validated root whose client runs, then shuts the root down.
    func withRoot<R: Sendable>(
        maximumConnections: Int = 20,
        leaseTimeout: Duration = .seconds(5),
        statementTimeout: Duration? = nil,
        _ body: (ScopeRoot) async throws -> R
    ) async throws -> R {
        let root = try makeRoot(
            maximumConnections: maximumConnections,
            leaseTimeout: leaseTimeout,
            statementTimeout: statementTimeout
        )
        return try await root.withRunningServices(logger: Logger(label: "test")) {
            let problems = await root.validate()
            try #require(problems.isEmpty, "\(problems)")
            return try await body(root)
        }
    }

    /// How many rows `items` holds, read by psql, outside the application.
    func itemCount() async throws -> Int {
        Int(try await server.psql("SELECT count(*) FROM items", database: database)) ?? -1
    }

    /// The states of the database's other connections, from `pg_stat_activity`.
    func connectionStates() async throws -> [String] {
        try await server.psql(
            "SELECT coalesce(state, '') FROM pg_stat_activity WHERE datname = '\(database)' AND pid <> pg_backend_pid()",
            database: database
        )
        .split(separator: "\n").map(String.init)
    }
}

/// The PostgreSQL suites run where a server can be had, and in CI always.
let postgresAvailable = ConditionTrait.enabled(
    if: PostgresTestServer.isEnabled,
    Comment(rawValue: PostgresTestServer.unavailableReason ?? "")
)
