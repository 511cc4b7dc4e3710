import Logging
import PostgresNIO
import Scoped
import ScopedDatabase
import ScopedPostgres
import ScopedTestSupport
import Testing

struct Failure: Error {}

/// Request scopes on a real PostgreSQL server: one transaction each, committed or rolled back
/// with the scope, the connection always returned.
@Suite(postgresAvailable, .loadExclusion)
struct PostgresSessionTests {
    @Test func aScopeCommitsWhenItEndsWellAndRollsBackWhenItThrowsOrIsCancelled() async throws {
        let fixture = try await PostgresFixture()
        try await fixture.withRoot { root in
            _ = try await root.withScope {
                try await ScopedValues.current.postgresSession.execute("INSERT INTO items (name) VALUES (\("kept"))")
            }
            await #expect(throws: Failure.self) {
                try await root.withScope {
                    try await ScopedValues.current.postgresSession.execute(
                        "INSERT INTO items (name) VALUES (\("thrown"))"
                    )
                    throw Failure()
                }
            }
            let cancelled = Task {
                try await root.withScope {
                    try await ScopedValues.current.postgresSession.execute(
                        "INSERT INTO items (name) VALUES (\("cancelled"))"
                    )
                    withUnsafeCurrentTask { $0?.cancel() }
                    try Task.checkCancellation()
                }
            }
            _ = await cancelled.result
            #expect(
                try await fixture.server.psql("SELECT string_agg(name, ',') FROM items", database: fixture.database)
                    == "kept"
            )
            // Every connection went back to the pool with its transaction ended.
            #expect(try await fixture.connectionStates().allSatisfy { $0 == "idle" })
        }
    }

    @Test func aLargeResultIsReadAsARowSequenceInsideTheSessionsTransaction() async throws {
        let fixture = try await PostgresFixture()
        try await fixture.withRoot { root in
            let (count, last) = try await root.withScope {
                let session = try await ScopedValues.current.postgresSession
                try await session.execute(
                    "INSERT INTO items (name) SELECT 'item ' || n FROM generate_series(1, 5000) AS n"
                )
                // Sees the transaction's own uncommitted rows, streamed.
                return try await session.query("SELECT name FROM items ORDER BY id") { rows in
                    var count = 0
                    var last = ""
                    for try await name in rows.decode(String.self) {
                        count += 1
                        last = name
                    }
                    return (count, last)
                }
            }
            #expect(count == 5000)
            #expect(last == "item 5000")
        }
        #expect(try await fixture.itemCount() == 5000)
    }

    @Test func valuesAreBoundNotSplicedEvenWhenTheyLookLikeSQL() async throws {
        let fixture = try await PostgresFixture()
        let hostile = "x'); DROP TABLE items; --"
        try await fixture.withRoot { root in
            let stored = try await root.withScope {
                let session = try await ScopedValues.current.postgresSession
                try await session.execute("INSERT INTO items (name) VALUES (\(hostile))")
                return try await session.query("SELECT name FROM items WHERE name = \(hostile)")
                    .map { try $0.decode(String.self) }
            }
            #expect(stored == [hostile])
        }
        #expect(try await fixture.itemCount() == 1)
    }

    @Test func concurrentChildTasksOfOneScopeShareItsOneTransactionOneStatementAtATime() async throws {
        let fixture = try await PostgresFixture()
        // Its property is turn-taking, not time: generous deadlines (5 s was passed once beside
        // a build, as the suite started; a turn waits at most the lease timeout).
        try await fixture.withRoot(maximumConnections: 2, leaseTimeout: .seconds(30), statementTimeout: .seconds(30)) {
            root in
            let transactions = try await root.withScope {
                try await withThrowingTaskGroup(of: Int64.self) { group in
                    for index in 0..<50 {
                        group.addTask {
                            let session = try await ScopedValues.current.postgresSession
                            try await session.execute("INSERT INTO items (name) VALUES (\("child \(index)"))")
                            return try await session.query("SELECT txid_current()")[0].decode(Int64.self)
                        }
                    }
                    return try await group.reduce(into: Set<Int64>()) { $0.insert($1) }
                }
            }
            #expect(transactions.count == 1)
        }
        #expect(try await fixture.itemCount() == 50)
    }

    @Test func manyMoreScopesThanConnectionsAllFinishBecauseEveryConnectionIsReturned() async throws {
        let fixture = try await PostgresFixture()
        // 200 scopes queue for 4 connections beside the rest of the suite: in a loaded CI run the
        // last waited past the default 5 s lease timeout, failed, and their rows were missing.
        // The bound here is the test's, not the property under test.
        let unexpected = Recorder<String>()
        try await fixture.withRoot(maximumConnections: 4, leaseTimeout: .seconds(30)) { root in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<200 {
                    group.addTask {
                        do {
                            try await root.withScope {
                                try await ScopedValues.current.postgresSession.execute(
                                    "INSERT INTO items (name) VALUES (\("item \(index)"))"
                                )
                                if index % 2 == 1 { throw Failure() }
                            }
                        } catch is Failure {
                        } catch {
                            unexpected.record("scope \(index): \(error)")
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(unexpected.all.isEmpty, "\(unexpected.all)")
            #expect(root.openScopeCount == 0)
            #expect(try await fixture.connectionStates().allSatisfy { $0 == "idle" })
        }
        #expect(try await fixture.itemCount() == 100)
    }

    @Test func aReadOnlyScopeRefusesToWrite() async throws {
        let fixture = try await PostgresFixture()
        try await fixture.withRoot { root in
            await #expect(throws: PostgresDatabaseError.self) {
                try await root.withScope({ $0.transactionMode = .readOnly }) {
                    try await ScopedValues.current.postgresSession.execute("INSERT INTO items (name) VALUES ('x')")
                }
            }
            let count = try await root.withScope({ $0.transactionMode = .readOnly }) {
                try await ScopedValues.current.postgresSession.query("SELECT count(*) FROM items")[0].decode(Int.self)
            }
            #expect(count == 0)
        }
    }

    @Test func aStatementThatFailedInAScopeThatEndedWellRollsBackAndReportsIt() async throws {
        let fixture = try await PostgresFixture()
        try await fixture.withRoot { root in
            let error = await #expect(throws: ScopeCloseError.self) {
                try await root.withScope {
                    let session = try await ScopedValues.current.postgresSession
                    try await session.execute("INSERT INTO items (name) VALUES ('first')")
                    // The handler swallows a failed statement and returns normally.
                    _ = try? await session.execute("INSERT INTO items (name) VALUES ('first')")
                }
            }
            #expect(error?.failures.first?.error is PostgresDatabaseError)
        }
        #expect(try await fixture.itemCount() == 0)
    }
}
