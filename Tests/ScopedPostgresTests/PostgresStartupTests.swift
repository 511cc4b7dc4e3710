import Foundation
import Logging
import PostgresNIO
import Scoped
import ScopedPostgres
import ScopedServiceLifecycle
import ScopedTestSupport
import Testing

/// Start-up: migrations under an advisory lock, and a server that cannot be reached.
@Suite(postgresAvailable)
struct PostgresStartupTests {
    @Test func twoInstancesStartingAtOnceApplyEachMigrationExactlyOnce() async throws {
        let fixture = try await PostgresFixture()
        let migrations =
            itemMigrations + [
                PostgresMigration(
                    version: 2,
                    name: "slow",
                    statements: ["SELECT pg_sleep(0.3)", "ALTER TABLE items ADD COLUMN year integer"]
                )
            ]
        // `CREATE TABLE` and `ADD COLUMN` fail when run twice: a second application would fail
        // its instance's start-up.
        let roots = try (0..<4).map { _ in try fixture.makeRoot(migrations: migrations) }
        try await withThrowingTaskGroup(of: [ScopeValidationError.Problem].self) { group in
            for root in roots {
                group.addTask {
                    try await root.withRunningServices(logger: Logger(label: "test")) { await root.validate() }
                }
            }
            for try await problems in group { #expect(problems.isEmpty, "\(problems)") }
        }
        #expect(
            try await fixture.server.psql(
                "SELECT string_agg(version::text, ',' ORDER BY version) FROM scoped_migrations",
                database: fixture.database
            ) == "1,2"
        )
    }

    @Test func aFailedMigrationLeavesNothingBehindAndNamesItsVersion() async throws {
        let fixture = try await PostgresFixture()
        let migrations =
            itemMigrations + [
                PostgresMigration(
                    version: 2,
                    name: "broken",
                    statements: ["CREATE TABLE half (id integer)", "SELEC 1"]
                )
            ]
        let root = try fixture.makeRoot(migrations: migrations)
        let problems = try await root.withRunningServices(logger: Logger(label: "test")) { await root.validate() }
        #expect(problems.contains { "\($0)".contains("Migration 2 (broken) failed") })
        #expect(
            try await fixture.server.psql("SELECT count(*) FROM scoped_migrations", database: fixture.database) == "1"
        )
        #expect(try await fixture.server.psql("SELECT to_regclass('half') IS NULL", database: fixture.database) == "t")
    }

    @Test func aFrozenServerFailsStartUpAtItsConnectTimeout() async throws {
        // A cluster of its own, frozen whole: it accepts connections (the kernel does) and never
        // answers them, as a wedged server or a partition looks from here.
        let fixture = try await PostgresFixture(server: .dedicated())
        var configuration = try PostgresConfiguration(url: fixture.url)
        configuration.connectTimeout = .seconds(2)
        let client = PostgresClient(
            configuration: configuration.clientConfiguration,
            backgroundLogger: Logger(label: "test")
        )
        try fixture.server.signalServer(SIGSTOP)
        let waited = try await withThrowingTaskGroup(of: Void.self, returning: Duration.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            let started = ContinuousClock.now
            let error = await #expect(throws: PostgresStartupError.self) {
                _ = try await PostgresDatabase(
                    client: client,
                    configuration: configuration,
                    logger: Logger(label: "test")
                )
            }
            let waited = started.duration(to: .now)
            try fixture.server.signalServer(SIGCONT)
            #expect("\(error.map { "\($0)" } ?? "")".contains("no connection within 2.0 seconds"))
            return waited
        }
        #expect(waited < .seconds(4), "the connect timeout is 2 s; start-up failed after \(waited)")
    }

    @Test func anUnreachableServerFailsStartUpNamingTheURLWithoutItsPassword() async throws {
        var configuration = try PostgresConfiguration(url: "postgres://catalog:s3cret@127.0.0.1:1/catalog")
        configuration.connectTimeout = .seconds(2)
        let root = ScopeRoot(services: [PostgresDatabaseKey.self]) { $0.postgresConfiguration = configuration }
        let problems = try await root.withRunningServices(logger: Logger(label: "test")) { await root.validate() }
        let text = problems.map { "\($0)" }.joined(separator: "\n")
        #expect(text.contains("postgres://catalog:***@127.0.0.1:1/catalog"), "\(text)")
        #expect(!text.contains("s3cret"))
    }
}

/// Database URLs, and what is shown of them.
struct PostgresConfigurationTests {
    @Test func aURLGivesItsPartsAndIsShownWithoutItsPassword() throws {
        let configuration = try PostgresConfiguration(url: "postgres://cat%40log:p%40ss@db.internal:6543/catalog")
        #expect(configuration.host == "db.internal")
        #expect(configuration.port == 6543)
        #expect(configuration.username == "cat@log")
        #expect(configuration.password == "p@ss")
        #expect(configuration.database == "catalog")
        #expect(!configuration.usesTLS)
        #expect("\(configuration)" == "postgres://cat@log:***@db.internal:6543/catalog")
    }

    @Test(arguments: [
        ("mysql://u:p@h/db", "expected postgres://"),
        ("postgres://u:secret@/db", "the host is missing"),
        ("postgres://h:5432/db", "the user name is missing"),
        ("postgres://u:secret@h:5432", "the database name is missing"),
        ("postgres://u:secret@h:5432/db?sslmode=verify-full", "sslmode must be disable or prefer"),
    ])
    func aBadURLIsRefusedWithItsPasswordRedacted(url: String, problem: String) {
        #expect {
            try PostgresConfiguration(url: url)
        } throws: { error in
            let text = "\(error)"
            return text.contains(problem) && !text.contains("secret")
        }
    }
}
