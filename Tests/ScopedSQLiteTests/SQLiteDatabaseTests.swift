import CSQLite
import Foundation
@testable import Scoped
import ScopedDatabase
@testable import ScopedSQLite
import Synchronization
import Testing
import ScopedTestSupport

struct SQLiteDatabaseTests {
    @Test(arguments: SQLiteConfiguration.Synchronous.allCases)
    func opensInWALModeWithForeignKeysAndTheConfiguredSynchronous(synchronous: SQLiteConfiguration.Synchronous)
        async throws
    {
        let folder = try TemporaryFolder()
        let path = folder.path("nested/deeper/catalog.sqlite")
        let database = try await SQLiteDatabase.open(SQLiteConfiguration(path: path, synchronous: synchronous))
        let (mode, sync, foreignKeys) = try await database.write { connection in
            (
                try connection.scalar("PRAGMA journal_mode", as: String.self),
                try connection.scalar("PRAGMA synchronous", as: Int.self),
                try connection.scalar("PRAGMA foreign_keys", as: Int.self)
            )
        }
        #expect(mode == "wal")
        #expect(sync == synchronous.pragmaValue)
        #expect(foreignKeys == 1)
        #expect(FileManager.default.fileExists(atPath: path))
        await database.close()
    }

    /// Each database starts one writer thread of its own and stops it when it closes, or when it
    /// is freed without closing: no thread of the library outlives its database.
    @Test func eachDatabaseOwnsItsWriterThreadUntilItClosesOrIsFreed() async throws {
        let folder = try TemporaryFolder()
        let (first, second) = (
            try await SQLiteDatabase.open(
                SQLiteConfiguration(path: folder.path("first.sqlite"), migrations: movieSchema)
            ),
            try await SQLiteDatabase.open(
                SQLiteConfiguration(path: folder.path("second.sqlite"), migrations: movieSchema)
            )
        )
        let (firstThread, secondThread) = (first.writerThreadName, second.writerThreadName)
        #expect(firstThread != secondThread)
        #expect(await eventually { threadNames().contains(firstThread) && threadNames().contains(secondThread) })
        // Both write, each on its own thread.
        for database in [first, second] {
            let session = SQLiteSession(database: database, mode: .readWrite)
            _ = try await session.execute("INSERT INTO movies (title, year) VALUES (\("Alien"), \(1979))")
            try await session.finish(.success)
        }
        await first.close()
        #expect(await eventually { !threadNames().contains(firstThread) })
        #expect(threadNames().contains(secondThread))
        await second.close()
        #expect(await eventually { !threadNames().contains(secondThread) })
        var unclosed: SQLiteDatabase? = try await SQLiteDatabase.open(
            SQLiteConfiguration(path: folder.path("third.sqlite"))
        )
        let unclosedThread = try #require(unclosed?.writerThreadName)
        #expect(await eventually { threadNames().contains(unclosedThread) })
        unclosed = nil
        #expect(await eventually { !threadNames().contains(unclosedThread) })
    }

    /// `write(_:)` runs its body and commit on the writer thread, under the statement timeout,
    /// as a session's writes do; `read(_:)` runs where the caller runs, under the same timeout.
    @Test func aWriteRunsOnTheWriterThreadAndBothEndAtTheStatementTimeout() async throws {
        let folder = try TemporaryFolder()
        let database = try await SQLiteDatabase.open(
            SQLiteConfiguration(
                path: folder.path("c.sqlite"),
                migrations: movieSchema,
                statementTimeout: .milliseconds(300)
            )
        )
        let thread = try await database.write { _ in currentThreadName() }
        #expect(thread == database.writerThreadName)
        let slow: SQL = """
            WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 300000000)
            SELECT count(*) FROM n
            """
        let started = ContinuousClock.now
        await #expect(throws: DatabaseTimeoutError.self) {
            try await database.write { try $0.scalar(slow, as: Int.self) }
        }
        await #expect(throws: DatabaseTimeoutError.self) {
            try await database.read { try $0.scalar(slow, as: Int.self) }
        }
        #expect(ContinuousClock.now - started < .seconds(10))
        // Interrupted, not broken: both serve the next call.
        #expect(try await database.write { try $0.scalar("SELECT 1", as: Int.self) } == 1)
        #expect(try await database.read { try $0.scalar("SELECT 2", as: Int.self) } == 2)
        await database.close()
    }

    @Test func textWithANulByteIsStoredAndReadWhole() async throws {
        let folder = try TemporaryFolder()
        let database = try await SQLiteDatabase.open(SQLiteConfiguration(path: folder.path("nul.sqlite")))
        let text = "before\u{0}after — 東京 🎬"
        let (stored, length) = try await database.write { connection in
            try connection.execute("CREATE TABLE notes (body TEXT)")
            try connection.execute("INSERT INTO notes (body) VALUES (\(text))")
            return (
                try connection.scalar("SELECT body FROM notes", as: String.self),
                try connection.scalar("SELECT length(CAST(body AS BLOB)) FROM notes", as: Int.self)
            )
        }
        #expect(stored == text)
        #expect(length == text.utf8.count)
        await database.close()
    }

    @Test func aConnectionReturnsToItsPoolOutsideAnyTransaction() async throws {
        let folder = try TemporaryFolder()
        let database = try await SQLiteDatabase.open(SQLiteConfiguration(path: folder.path("leak.sqlite"), readers: 1))
        #expect(database.statistics() == SQLiteDatabase.Statistics(connections: 2, leased: 0))
        // A caller that begins a transaction and returns the connection without ending it.
        let writer = try await database.beginWrite()
        let reader = try await database.beginRead()
        #expect(database.statistics().leased == 2)
        #expect(writer.isInTransaction && reader.isInTransaction)
        database.release(writer)
        database.release(reader)
        #expect(!writer.isInTransaction && !reader.isInTransaction)
        #expect(database.statistics().leased == 0)
        // Another process can take the write lock at once: nothing was left holding it.
        var other: OpaquePointer?
        #expect(sqlite3_open(folder.path("leak.sqlite"), &other) == SQLITE_OK)
        #expect(sqlite3_exec(other, "BEGIN IMMEDIATE; COMMIT", nil, nil, nil) == SQLITE_OK)
        sqlite3_close(other)
        await database.close()
    }

    @Test func unwritableFolderIsAClearErrorNamingThePath() throws {
        let folder = try TemporaryFolder()
        let blocker = folder.path("not-a-folder")
        try Data("x".utf8).write(to: URL(filePath: blocker))
        let error = try #require(throws: SQLiteError.self) {
            try SQLiteDatabase(SQLiteConfiguration(path: blocker + "/catalog.sqlite"))
        }
        #expect(error.code == .cantOpen)
        #expect(error.message.contains(blocker))
    }

    @Test func corruptFileIsAClearErrorAndNoCrash() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("corrupt.sqlite")
        try Data(repeating: 0x5A, count: 8192).write(to: URL(filePath: path))
        let error = try #require(throws: SQLiteError.self) {
            try SQLiteDatabase(SQLiteConfiguration(path: path))
        }
        #expect(error.code == .corrupt)
        #expect(error.message.contains(path))
    }

    @Test func readOnlyDatabaseRefusesWritesWithATypedError() async throws {
        let folder = try TemporaryFolder()
        let path = folder.path("catalog.sqlite")
        let writable = try await SQLiteDatabase.open(SQLiteConfiguration(path: path, migrations: movieSchema))
        await writable.close()
        let readOnly = try await SQLiteDatabase.open(SQLiteConfiguration(path: path, readOnly: true))
        let error = try await #require(throws: SQLiteError.self) {
            try await readOnly.write {
                _ = try $0.execute("INSERT INTO movies (title, year) VALUES (\("Heat"), \(1995))")
            }
        }
        #expect(error.code == .readOnly)
        #expect(error.sql == "INSERT INTO movies (title, year) VALUES (?, ?)")
        #expect(try await readOnly.read { try $0.scalar("SELECT count(*) FROM movies", as: Int.self) } == 0)
        await readOnly.close()
    }

    @Test func migrationsRunOnceInOrderAndRecordTheVersion() async throws {
        let folder = try TemporaryFolder()
        let path = folder.path("catalog.sqlite")
        let first = try await SQLiteDatabase.open(
            SQLiteConfiguration(path: path, migrations: [movieSchema[1], movieSchema[0]])
        )
        #expect(try await first.schemaVersion() == 2)
        try await first.write { _ = try $0.execute("INSERT INTO movies (title, year) VALUES (\("Up"), \(2009))") }
        await first.close()
        // Reopening applies nothing again: the row survives and no CREATE TABLE fails.
        let second = try await SQLiteDatabase.open(SQLiteConfiguration(path: path, migrations: movieSchema))
        #expect(try await second.read { try $0.scalar("SELECT count(*) FROM movies", as: Int.self) } == 1)
        await second.close()
    }

    @Test func failingMigrationLeavesThePreviousVersionAndNamesTheMigration() async throws {
        let folder = try TemporaryFolder()
        let path = folder.path("catalog.sqlite")
        let broken = SQLiteMigration(
            version: 3,
            name: "add broken index",
            statements: ["CREATE TABLE extra (x); CREATE INDEX i ON nowhere (x);"]
        )
        let error = try await #require(throws: SQLiteMigrationError.self) {
            try await SQLiteDatabase.open(SQLiteConfiguration(path: path, migrations: movieSchema + [broken]))
        }
        #expect(error.version == 3)
        #expect(error.currentVersion == 2)
        #expect(error.description.contains("add broken index"))
        let reopened = try await SQLiteDatabase.open(SQLiteConfiguration(path: path))
        #expect(try await reopened.schemaVersion() == 2)
        let extraTables = try await reopened.read {
            try $0.scalar("SELECT count(*) FROM sqlite_master WHERE name = \("extra")", as: Int.self)
        }
        #expect(extraTables == 0, "the failed migration's first statement was rolled back")
        await reopened.close()
    }

    @Test func interpolatedValuesAreBoundNeverSpliced() async throws {
        let folder = try TemporaryFolder()
        let database = try await SQLiteDatabase.open(
            SQLiteConfiguration(path: folder.path("c.sqlite"), migrations: movieSchema)
        )
        let hostile = "Toy Story'); DROP TABLE movies; --"
        let insert: SQL = "INSERT INTO movies (title, year, director) VALUES (\(hostile), \(1995), \(String?.none))"
        #expect(insert.text == "INSERT INTO movies (title, year, director) VALUES (?, ?, ?)")
        #expect(insert.bindings == [.text(hostile), .integer(1995), .null])
        try await database.write { _ = try $0.execute(insert) }
        let rows = try await database.read { try $0.query("SELECT * FROM movies", as: MovieRow.self) }
        #expect(rows == [MovieRow(id: 1, title: hostile, year: 1995, director: nil)])
        await database.close()
    }

    @Test func constraintViolationIsATypedErrorCarryingTheStatement() async throws {
        let folder = try TemporaryFolder()
        let database = try await SQLiteDatabase.open(
            SQLiteConfiguration(path: folder.path("c.sqlite"), migrations: movieSchema)
        )
        let error = try await #require(throws: SQLiteError.self) {
            try await database.write { connection in
                try connection.execute("INSERT INTO movies (title, year) VALUES (\("Up"), \(2009))")
                try connection.execute("INSERT INTO movies (title, year) VALUES (\("Up"), \(2010))")
            }
        }
        #expect(error.code == .constraint)
        #expect(error.message.contains("UNIQUE"))
        #expect(error.sql == "INSERT INTO movies (title, year) VALUES (?, ?)")
        #expect(try await database.read { try $0.scalar("SELECT count(*) FROM movies", as: Int.self) } == 0)
        await database.close()
    }

    @Test func rowsAreReadByColumnAndDecodingErrorsNameTheColumn() async throws {
        let folder = try TemporaryFolder()
        let database = try await SQLiteDatabase.open(
            SQLiteConfiguration(path: folder.path("c.sqlite"), migrations: movieSchema)
        )
        try await database.write { _ = try $0.execute("INSERT INTO movies (title, year) VALUES (\("Up"), \(2009))") }
        let row = try #require(
            try await database.read { try $0.query("SELECT id, title, year, director FROM movies") }.first
        )
        #expect(try row.get("title", as: String.self) == "Up")
        #expect(row["director"] == .null)
        #expect(throws: SQLiteDecodingError.typeMismatch(column: "title", expected: "Int", found: .text("Up"))) {
            try row.get("title", as: Int.self)
        }
        #expect(throws: SQLiteDecodingError.missingColumn("rating")) { try row.get("rating", as: Int.self) }
        await database.close()
    }

    /// Another connection on the same file, on a thread of its own (as another process would
    /// be), holds the write lock until `release` is called; returns once it holds it.
    private func holdWriteLock(on path: String, events: Recorder<String>) async throws -> (
        release: @Sendable () -> Void, done: Task<Void, Never>
    ) {
        let connection = try SQLiteConnection(path: path, flags: SQLITE_OPEN_READWRITE, isWriter: true)
        let state = Mutex((holding: false, released: false, finished: false))
        let thread = Thread {
            try? connection.executeScript("BEGIN IMMEDIATE")
            state.withLock { $0.holding = true }
            while !state.withLock({ $0.released }) { Thread.sleep(forTimeInterval: 0.001) }
            events.record("released")
            try? connection.executeScript("COMMIT")
            connection.close()
            state.withLock { $0.finished = true }
        }
        thread.start()
        while !state.withLock({ $0.holding }) { try await Task.sleep(for: .milliseconds(1)) }
        let done = Task {
            while !state.withLock({ $0.finished }) { try? await Task.sleep(for: .milliseconds(1)) }
        }
        return ({ state.withLock { $0.released = true } }, done)
    }

    @Test func writeWaitsForAnotherProcessesWriteLockAndSucceeds() async throws {
        let folder = try TemporaryFolder()
        let path = folder.path("c.sqlite")
        let database = try await SQLiteDatabase.open(
            SQLiteConfiguration(path: path, busyTimeout: .seconds(30), migrations: movieSchema)
        )
        let events = Recorder<String>()
        let holder = try await holdWriteLock(on: path, events: events)
        let write = Task {
            try await database.write { connection in
                events.record("wrote")
                try connection.execute("INSERT INTO movies (title, year) VALUES (\("Heat"), \(1995))")
            }
        }
        try await Task.sleep(for: .milliseconds(50))
        holder.release()
        try await write.value
        await holder.done.value
        #expect(events.all == ["released", "wrote"])
        #expect(try await database.read { try $0.scalar("SELECT count(*) FROM movies", as: Int.self) } == 1)
        await database.close()
    }

    @Test func writeFailsAsBusyWhenTheLockIsHeldPastTheTimeout() async throws {
        let folder = try TemporaryFolder()
        let path = folder.path("c.sqlite")
        let database = try await SQLiteDatabase.open(
            SQLiteConfiguration(path: path, busyTimeout: .milliseconds(50), migrations: movieSchema)
        )
        let holder = try await holdWriteLock(on: path, events: Recorder<String>())
        let error = try await #require(throws: SQLiteError.self) {
            try await database.write {
                _ = try $0.execute("INSERT INTO movies (title, year) VALUES (\("Heat"), \(1995))")
            }
        }
        holder.release()
        await holder.done.value
        #expect(error.code == .busy)
        #expect(database.idleConnectionCount == 5)
        #expect(try await database.read { try $0.scalar("SELECT count(*) FROM movies", as: Int.self) } == 0)
        await database.close()
    }
}

/// Databases opened at once on one file, as instances of a server starting together open it.
struct DatabasesOpeningOneFileTogetherTests {
    /// Three databases open one new file at once, with a migration that takes a while: each
    /// waits for the others' WAL switch and migration (SQLite's busy handler, for at most
    /// `busyTimeout`) instead of failing as busy, and the migration is applied once.
    @Test func databasesOpenedAtOnceOnOneFileWaitForEachOthersMigrations() async throws {
        let folder = try TemporaryFolder()
        let path = folder.path("shared.sqlite")
        let slow = [
            SQLiteMigration(
                version: 1,
                name: "numbers",
                statements: [
                    "CREATE TABLE numbers (n INTEGER)",
                    """
                    WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 300000)
                    INSERT INTO numbers SELECT i FROM c
                    """,
                ]
            )
        ]
        let databases = try await withThrowingTaskGroup(of: SQLiteDatabase.self) { group in
            for _ in 0..<3 {
                group.addTask { try await SQLiteDatabase.open(SQLiteConfiguration(path: path, migrations: slow)) }
            }
            return try await group.reduce(into: [SQLiteDatabase]()) { $0.append($1) }
        }
        for database in databases {
            #expect(try await database.read { try $0.scalar("SELECT count(*) FROM numbers", as: Int.self) } == 300_000)
            #expect(try await database.schemaVersion() == 1)
            await database.close()
        }
    }
}

/// What is left of the library once a process's every root and database has shut down.
struct NothingLeftAfterShutdownTests {
    /// Once a root and its database have shut down, no timer or thread of the library is left.
    ///
    /// In a process of its own: a root with a close timeout and an SQLite database serves a
    /// write (its lease, statement and commit each had a deadline on the watchdog), then shuts
    /// down. Within the watchdog's grace no timer of it is left, and no writer thread.
    @Test func afterEveryRootAndDatabaseHasShutDownNoTimerOrThreadOfTheLibraryIsLeft() async throws {
        let folder = try TemporaryFolder()
        await #expect(processExitsWith: .success) { [path = folder.path("catalog.sqlite") as String] in
            let root = ScopeRoot(services: [SQLiteDatabaseKey.self, SQLiteSessionKey.self], closeTimeout: .seconds(5)) {
                $0.sqliteConfiguration = SQLiteConfiguration(path: path, migrations: movieSchema)
            }
            guard await root.validate().isEmpty else { exit(2) }
            let writer = try await root.withScope {
                _ = try await ScopedValues.current.sqliteSession.execute(
                    "INSERT INTO movies (title, year) VALUES (\("Alien"), \(1979))"
                )
                return try await ScopedValues.current.sqliteDatabase.writerThreadName
            }
            // The work had deadlines, so the watchdog made its timer; the writer thread runs.
            guard DeadlineWatchdog.shared.hasTimer, threadNames().contains(writer) else { exit(3) }
            await root.shutdown()
            let clock = ContinuousClock()
            let start = clock.now
            while DeadlineWatchdog.shared.hasTimer || threadNames().contains(writer) {
                if clock.now - start > .seconds(10) { exit(4) }
                try await Task.sleep(for: .milliseconds(20))
            }
        }
    }
}

/// The name of the thread this runs on, as Linux shows it.
private func currentThreadName() -> String {
    ((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "")
        .trimmingCharacters(in: .whitespacesAndNewlines)
}
