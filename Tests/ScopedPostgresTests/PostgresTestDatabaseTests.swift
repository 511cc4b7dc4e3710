import Logging
import PostgresNIO
import Scoped
import ScopedDatabase
import ScopedPostgres
import ScopedTestSupport
import ScopedTesting
import Synchronization
import Testing

/// One database on the test server that every test of this file shares, made and migrated the
/// first time a test needs it; each test runs in a transaction of its own on it.
struct SharedItemsDatabase: TestDatabase {
    private static let fixture = Mutex<Task<PostgresFixture, any Error>?>(nil)

    /// The database, made on first use.
    static func shared() async throws -> PostgresFixture {
        let making = fixture.withLock { fixture in
            if let fixture { return fixture }
            let making = Task { try await PostgresFixture() }
            fixture = making
            return making
        }
        return try await making.value
    }

    func withIsolation<R: Sendable>(
        for test: String,
        _ body: (@escaping @Sendable (inout ScopedValues) -> Void) async throws -> R
    ) async throws -> R {
        let configuration = try await PostgresConfiguration(url: try Self.shared().url, migrations: itemMigrations)
        return try await PostgresTestDatabase.postgres(configuration).withIsolation(for: test, body)
    }
}

private let bothCases = Rendezvous(parties: 2)

/// The `.scoped(database: .postgres(…))` trait: every session of a test in a savepoint of the
/// test's transaction, rolled back when the test ends.
@Suite(postgresAvailable)
struct PostgresTestDatabaseTests {
    /// An application root with no database configured at all: the sessions never need one.
    private func applicationRoot() -> ScopeRoot {
        ScopeRoot(services: [PostgresSessionKey.self]) { _ in }
    }

    private func names(_ root: ScopeRoot) async throws -> [String] {
        try await root.withScope({ $0.transactionMode = .readOnly }) {
            try await ScopedValues.current.postgresSession.query("SELECT name FROM items ORDER BY name")
                .map { try $0.decode(String.self) }
        }
    }

    @Test(.scoped(database: SharedItemsDatabase()), arguments: [1, 2])
    func twoTestsWritingTheSameUniqueKeyAtOnceBothPass(case: Int) async throws {
        let root = applicationRoot()
        let overlapped = await bothCases.arrive()
        // The second case's insert waits until the first case's transaction is rolled back.
        let inserted = try await root.withScope {
            try await ScopedValues.current.postgresSession.execute("INSERT INTO items (name) VALUES ('same')")
        }
        #expect(inserted == 1)
        #expect(try await names(root) == ["same"])
        #expect(overlapped, "the two cases did not run at the same time")
        await root.shutdown()
    }

    @Test(.scoped(database: SharedItemsDatabase()))
    func eachScopeCommitsOrRollsBackInItsSavepointAndAReadOnlyScopeCannotWrite() async throws {
        let root = applicationRoot()
        try await root.withScope {
            try await ScopedValues.current.postgresSession.execute("INSERT INTO items (name) VALUES ('kept')")
        }
        struct Failure: Error {}
        await #expect(throws: Failure.self) {
            try await root.withScope {
                try await ScopedValues.current.postgresSession.execute("INSERT INTO items (name) VALUES ('undone')")
                throw Failure()
            }
        }
        // A failed statement aborts only its own scope's savepoint.
        await #expect(throws: PostgresDatabaseError.self) {
            try await root.withScope {
                try await ScopedValues.current.postgresSession.execute("INSERT INTO items (name) VALUES ('kept')")
            }
        }
        let readOnly = await #expect(throws: PostgresDatabaseError.self) {
            try await root.withScope({ $0.transactionMode = .readOnly }) {
                try await ScopedValues.current.postgresSession.execute("INSERT INTO items (name) VALUES ('read')")
            }
        }
        #expect(readOnly?.sqlState == "25006")
        // The read-only mode ended with its scope.
        try await root.withScope {
            try await ScopedValues.current.postgresSession.execute("INSERT INTO items (name) VALUES ('later')")
        }
        #expect(try await names(root) == ["kept", "later"])
        await root.shutdown()
    }

    @Test func nothingATestWroteOutlivesIt() async throws {
        let fixture = try await SharedItemsDatabase.shared()
        let seen = try await SharedItemsDatabase()
            .withIsolation(for: "test") { isolate in
                try await withTestScope({ isolate(&$0) }) {
                    // Built inside the test, as an application under test is.
                    let root = applicationRoot()
                    try await root.withScope {
                        try await ScopedValues.current.postgresSession.execute(
                            "INSERT INTO items (name) VALUES ('gone afterwards')"
                        )
                    }
                    let seen = try await names(root)
                    await root.shutdown()
                    return seen
                }
            }
        #expect(seen.contains("gone afterwards"))
        #expect(
            try await fixture.server.psql(
                "SELECT count(*) FROM items WHERE name = 'gone afterwards'",
                database: fixture.database
            ) == "0"
        )
    }
}
