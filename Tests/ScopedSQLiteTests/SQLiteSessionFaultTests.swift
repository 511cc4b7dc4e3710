import Foundation
import Scoped
import ScopedDatabase
import ScopedSQLite
import ScopedTestSupport
import Testing

/// A query that keeps SQLite busy for seconds, on any machine: it counts to 300 million.
private let slowQuery: SQL = """
    WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 300000000)
    SELECT count(*) FROM n
    """

/// A write that keeps the writer busy as long.
private let slowInsert: SQL = """
    INSERT INTO movies (title, year)
    WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 300000000)
    SELECT 'slow', count(*) FROM n
    """

private func openDatabase(
    _ folder: TemporaryFolder,
    readers: Int = 2,
    leaseTimeout: Duration = .seconds(5),
    statementTimeout: Duration = .seconds(10)
) async throws -> SQLiteDatabase {
    try await SQLiteDatabase.open(
        SQLiteConfiguration(
            path: folder.path("catalog.sqlite"),
            readers: readers,
            migrations: movieSchema,
            leaseTimeout: leaseTimeout,
            statementTimeout: statementTimeout
        )
    )
}

/// What a session does when the code using it, or the disk under it, misbehaves.
@Suite(.loadExclusion)
struct SQLiteSessionFaultTests {
    @Test func aSessionUsedAfterItsScopeEndedThrowsScopeEndedAndLeasesNothing() async throws {
        let folder = try TemporaryFolder()
        let database = try await openDatabase(folder)
        let session = SQLiteSession(database: database, mode: .readWrite)
        try await session.execute("INSERT INTO movies (title, year) VALUES (\("Up"), \(2009))")
        try await session.finish(.success)
        // As an unstructured task that kept the session past its request would use it.
        await #expect(throws: ScopedError.scopeEnded(entry: "sqliteSession")) {
            try await session.execute("INSERT INTO movies (title, year) VALUES (\("Heat"), \(1995))")
        }
        #expect(!session.isActive)
        #expect(database.statistics().leased == 0)
        // The writer is free: another session writes, and the database closes.
        let next = SQLiteSession(database: database)
        try await next.execute("INSERT INTO movies (title, year) VALUES (\("Alien"), \(1979))")
        try await next.finish(.success)
        #expect(try await database.read { try $0.scalar("SELECT count(*) FROM movies", as: Int.self) } == 2)
        await database.close()
    }

    @Test func finishWaitsForTheStatementInFlight() async throws {
        let folder = try TemporaryFolder()
        let database = try await openDatabase(folder, statementTimeout: .milliseconds(300))
        let session = SQLiteSession(database: database, mode: .readWrite)
        let statement = Task { try await session.scalar(slowQuery, as: Int.self) }
        #expect(await eventually { session.isActive })
        // Finishing waited for the statement: it ran out of time, so nothing was committed and
        // finishing says so (a finish that did not wait would end the transaction under it). Which
        // of the two tasks resumes first afterwards is not part of the contract.
        await #expect(throws: DatabaseTimeoutError.self) { try await session.finish(.success) }
        await #expect(throws: DatabaseTimeoutError.self) { try await statement.value }
        #expect(database.statistics().leased == 0)
        await database.close()
    }

    @Test func aStatementPastItsDeadlineIsInterruptedAndItsConnectionReplaced() async throws {
        let folder = try TemporaryFolder()
        // Long enough for a point read on a machine busy with other tests, far shorter than the
        // slow query.
        let database = try await openDatabase(folder, readers: 1, statementTimeout: .seconds(2))
        // Read-only: the slow query runs on the database's one reader (a read-write session
        // would run it on the writer, and the test would say nothing of the readers).
        let session = SQLiteSession(database: database, mode: .readOnly)
        let error = await #expect(throws: DatabaseTimeoutError.self) {
            try await session.scalar(slowQuery, as: Int.self)
        }
        #expect(error?.operation == .statement)
        #expect(error?.entry == "sqliteSession")
        try? await session.finish(.failure(error!))
        #expect(database.statistics().connections == 2)
        #expect(database.statistics().leased == 0)
        // The one reader was replaced, not lost: the next session reads on it.
        let next = SQLiteSession(database: database, mode: .readOnly)
        #expect(try await next.scalar("SELECT count(*) FROM movies", as: Int.self) == 0)
        try await next.finish(.success)
        await database.close()
    }

    @Test func aSessionWaitsForAConnectionOnlyUntilItsLeaseTimeout() async throws {
        let folder = try TemporaryFolder()
        let database = try await openDatabase(folder, readers: 1, leaseTimeout: .milliseconds(200))
        let holder = SQLiteSession(database: database)
        _ = try await holder.scalar("SELECT count(*) FROM movies", as: Int.self)
        let waiter = SQLiteSession(database: database)
        let error = await #expect(throws: DatabaseTimeoutError.self) {
            try await waiter.scalar("SELECT count(*) FROM movies", as: Int.self)
        }
        #expect(error?.operation == .lease)
        try await holder.finish(.success)
        try await waiter.finish(.cancelled)
        #expect(database.statistics().leased == 0)
        await database.close()
    }

    @Test func writesHoldNoThreadOfTheCooperativePool() async throws {
        let folder = try TemporaryFolder()
        let database = try await openDatabase(folder, readers: 1, statementTimeout: .seconds(30))
        // One slow write on the writer and one slow read on the reader: as many blocking
        // statements as this machine has cooperative threads.
        let writer = SQLiteSession(database: database, mode: .readWrite)
        let reader = SQLiteSession(database: database, mode: .readOnly)
        let order = Recorder<String>()
        let write = Task {
            _ = try? await writer.execute(slowInsert)
            order.record("statement")
        }
        let read = Task {
            _ = try? await reader.scalar(slowQuery, as: Int.self)
            order.record("statement")
        }
        #expect(await eventually { writer.isActive && reader.isActive })
        try await Task.sleep(for: .milliseconds(100))
        // Work that needs a cooperative thread runs while both statements still run: the write
        // holds one of SQLite's threads, not one of the pool's.
        await Task.detached { order.record("cooperative work") }.value
        #expect(order.all == ["cooperative work"])
        write.cancel()
        read.cancel()
        try? await writer.finish(.cancelled)
        try? await reader.finish(.cancelled)
        await write.value
        await read.value
        await database.close()
    }

    @Test(.enabled(if: FreezableDisk.isAvailable, "\(FreezableDisk.unavailableReason ?? "")"))
    func aCommitOnAFrozenDiskEndsAtItsDeadlineAndTheWriterComesBackWithTheDisk() async throws {
        let disk = try FreezableDisk()
        let database = try await SQLiteDatabase.open(
            SQLiteConfiguration(
                path: disk.path("catalog.sqlite"),
                readers: 1,
                migrations: movieSchema,
                statementTimeout: .milliseconds(500)
            )
        )
        let session = SQLiteSession(database: database, mode: .readWrite)
        try await session.execute("INSERT INTO movies (title, year) VALUES (\("Up"), \(2009))")
        try disk.freeze()
        // Thawed after 15 s whatever happens, so that a commit that waits for the disk ends too.
        let thaw = Task {
            try await Task.sleep(for: .seconds(15))
            try disk.thaw()
        }
        let started = ContinuousClock.now
        // The commit's write blocks in the kernel, where no interrupt reaches it: the session
        // stops waiting at the deadline, and the scope closing it ends.
        let error = await #expect(throws: DatabaseTimeoutError.self) { try await session.finish(.success) }
        let waited = ContinuousClock.now - started
        #expect(error?.operation == .finish)
        #expect(waited < .seconds(5), "the commit's deadline is 500 ms; it returned after \(waited)")
        // The writer stays with the commit that waits for the disk: no other session gets it.
        #expect(database.statistics().leased == 1)
        thaw.cancel()
        try disk.thaw()
        #expect(await eventually { database.statistics().leased == 0 })
        // Back with the disk: the next write commits. Whether "Up" was committed is not known to
        // its session, which was told its commit ran out of time.
        let next = SQLiteSession(database: database, mode: .readWrite)
        try await next.execute("INSERT INTO movies (title, year) VALUES (\("Alien"), \(1979))")
        try await next.finish(.success)
        let stored = try await database.read {
            try $0.scalar("SELECT count(*) FROM movies WHERE title = 'Alien'", as: Int.self)
        }
        #expect(stored == 1)
        #expect(database.statistics().leased == 0)
        await database.close()
    }

    @Test func aFullDiskIsItsOwnErrorAndNothingAcknowledgedIsLost() async throws {
        let folder = try TemporaryFolder()
        let database = try await openDatabase(folder)
        let setUp = SQLiteSession(database: database, mode: .readWrite)
        // The writer may not grow the file past its current pages: a full disk, as SQLite sees it.
        let pages = try await setUp.scalar("PRAGMA page_count", as: Int.self) ?? 0
        _ = try await setUp.scalar(SQL(stringLiteral: "PRAGMA max_page_count = \(pages + 2)"), as: Int.self)
        try await setUp.finish(.success)
        var acknowledged = 0
        var failure: SQLiteError?
        for index in 0..<10_000 where failure == nil {
            let session = SQLiteSession(database: database, mode: .readWrite)
            do {
                try await session.execute(
                    "INSERT INTO movies (title, year) VALUES (\(String(repeating: "x", count: 500) + "\(index)"), \(2000))"
                )
                try await session.finish(.success)
                acknowledged += 1
            } catch let error as SQLiteError {
                failure = error
                try? await session.finish(.failure(error))
            }
        }
        #expect(failure?.code == .full)
        #expect(acknowledged > 0)
        let stored = try await database.read { try $0.scalar("SELECT count(*) FROM movies", as: Int.self) }
        #expect(stored == acknowledged)
        #expect(database.statistics().leased == 0)
        await database.close()
    }
}
