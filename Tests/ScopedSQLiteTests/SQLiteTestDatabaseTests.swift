import Foundation
import Scoped
import ScopedDatabase
import ScopedSQLite
import ScopedTestSupport
import ScopedTesting
import Synchronization
import Testing

/// A schema with a unique key, for tests that write the same key at once.
private let noteMigrations = [
    SQLiteMigration(version: 1, name: "notes", statements: ["CREATE TABLE notes (key TEXT PRIMARY KEY, body TEXT)"])
]

private let bothCases = Rendezvous(parties: 2)

/// The `.scoped(database: .sqlite(…))` trait: a real file of each test's own.
struct SQLiteTestDatabaseTests {
    /// An application root as an application builds one inside the test, configured with a file
    /// the test database replaces.
    private func applicationRoot() -> ScopeRoot {
        ScopeRoot(services: [SQLiteDatabaseKey.self, SQLiteSessionKey.self]) {
            $0.sqliteConfiguration = SQLiteConfiguration(path: "/nonexistent/application.sqlite")
        }
    }

    @Test(.scoped(database: .sqlite(migrations: noteMigrations)), arguments: [1, 2])
    func twoTestsWritingTheSameUniqueKeyAtOnceBothPass(case: Int) async throws {
        let root = applicationRoot()
        let overlapped = await bothCases.arrive()
        try await root.withScope {
            try await ScopedValues.current.sqliteSession.execute(
                "INSERT INTO notes (key, body) VALUES (\("same"), \("from case \(`case`)"))"
            )
        }
        // Each case sees its own row and only it.
        let bodies = try await root.withScope({ $0.transactionMode = .readOnly }) {
            try await ScopedValues.current.sqliteSession.query("SELECT body FROM notes")
                .map { try $0.get("body", as: String.self) }
        }
        #expect(bodies == ["from case \(`case`)"])
        #expect(overlapped, "the two cases did not run at the same time")
        // The application's own file was never opened.
        let path = try await root.withScope { try await ScopedValues.current.sqliteDatabase.configuration.path }
        #expect(path != "/nonexistent/application.sqlite")
        await root.shutdown()
    }

    @Test func theTestsFileIsDeletedWhenTheTestEndsAndItsRootLeavesItOpenUntilThen() async throws {
        let database = SQLiteTestDatabase.sqlite(migrations: noteMigrations)
        let path = try await database.withIsolation(for: "test") { isolate in
            try await withTestScope({ isolate(&$0) }) {
                let root = applicationRoot()
                try await root.withScope {
                    try await ScopedValues.current.sqliteSession.execute(
                        "INSERT INTO notes (key) VALUES (\("a"))"
                    )
                }
                await root.shutdown()
                // A second root in the same test finds the file open, with the first root's row.
                let next = applicationRoot()
                let count = try await next.withScope {
                    try await ScopedValues.current.sqliteSession.scalar("SELECT count(*) FROM notes", as: Int.self)
                }
                #expect(count == 1)
                let path = try await next.withScope { try await ScopedValues.current.sqliteDatabase.configuration.path }
                await next.shutdown()
                #expect(FileManager.default.fileExists(atPath: path))
                return path
            }
        }
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func aSessionKeptPastTheTestHoldsItsEndForAtMostAStatementsTime() async throws {
        var database = SQLiteTestDatabase.sqlite(migrations: noteMigrations)
        database.configuration.statementTimeout = .milliseconds(500)
        let kept = Mutex<Scope?>(nil)
        let clock = ContinuousClock()
        let started = clock.now
        try await withKnownIssue {
            try await database.withIsolation(for: "test") { isolate in
                try await withTestScope({ isolate(&$0) }) {
                    // A request scope the test forgot to close, holding the writer.
                    let scope = applicationRoot().openScope()
                    _ = try await scope.run {
                        try await ScopedValues.current.sqliteSession.execute("INSERT INTO notes (key) VALUES ('held')")
                    }
                    kept.withLock { $0 = scope }
                }
            }
        } matching: { issue in
            String(describing: issue).contains("still running")
        }
        // The check's grace and the bounded close, not forever. (A loaded machine stretches the
        // grace, which counts at most 50 ms per 10 ms step: 20 s was passed beside a build.)
        #expect(clock.now - started < .seconds(60))
        try? await kept.withLock { $0 }?.close(.cancelled)
    }
}
