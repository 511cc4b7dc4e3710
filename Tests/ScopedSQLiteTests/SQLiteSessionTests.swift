import Foundation
import Scoped
import ScopedDatabase
import ScopedSQLite
import Testing
import ScopedTestSupport

/// A root whose database is a fresh file with the movie schema.
private func makeRoot(_ folder: TemporaryFolder, readers: Int = 4, leaseTimeout: Duration = .seconds(5)) -> ScopeRoot {
    let configuration = SQLiteConfiguration(
        path: folder.path("catalog.sqlite"),
        readers: readers,
        migrations: movieSchema,
        leaseTimeout: leaseTimeout
    )
    return ScopeRoot(services: [SQLiteDatabaseKey.self, SQLiteSessionKey.self]) {
        $0.sqliteConfiguration = configuration
    }
}

private func count(_ root: ScopeRoot) async throws -> Int {
    try await root.withScope {
        try await ScopedValues.current.sqliteSession.scalar("SELECT count(*) FROM movies") ?? -1
    }
}

private func insert(_ title: String) async throws {
    try await ScopedValues.current.sqliteSession.execute("INSERT INTO movies (title, year) VALUES (\(title), \(2000))")
}

struct SQLiteSessionTests {
    @Test func rootValidatesWithTheDatabaseAndSessionServices() async throws {
        let folder = try TemporaryFolder()
        let root = makeRoot(folder)
        #expect(await root.validate().isEmpty)
        await root.shutdown()
    }

    @Test func missingConfigurationIsReportedByValidation() async throws {
        let root = ScopeRoot(services: [SQLiteDatabaseKey.self])
        let problems = await root.validate()
        #expect(problems.map(\.entry) == ["sqliteDatabase"])
        #expect(problems.first?.message.contains("sqliteConfiguration") == true)
    }

    @Test func sessionCommitsWhenTheScopeSucceeds() async throws {
        let folder = try TemporaryFolder()
        let root = makeRoot(folder)
        try await root.withScope {
            try await insert("Up")
            #expect(try await ScopedValues.current.sqliteSession.isWriting)
        }
        #expect(try await count(root) == 1)
        await root.shutdown()
    }

    @Test func sessionRollsBackWhenTheScopeThrowsAfterWriting() async throws {
        struct HandlerFailure: Error {}
        let folder = try TemporaryFolder()
        let root = makeRoot(folder)
        await #expect(throws: HandlerFailure.self) {
            try await root.withScope {
                try await insert("Up")
                throw HandlerFailure()
            }
        }
        #expect(try await count(root) == 0)
        await root.shutdown()
    }

    @Test func sessionRollsBackWhenTheScopeIsCancelled() async throws {
        let folder = try TemporaryFolder()
        let root = makeRoot(folder)
        let wrote = AsyncStream.makeStream(of: Void.self)
        let request = Task {
            try await root.withScope {
                try await insert("Up")
                wrote.continuation.yield()
                try await Task.sleep(for: .seconds(30))
            }
        }
        for await _ in wrote.stream { break }
        request.cancel()
        await #expect(throws: CancellationError.self) { try await request.value }
        #expect(try await count(root) == 0)
        let database = try await root.withScope { try await ScopedValues.current.sqliteDatabase }
        #expect(database.idleConnectionCount == 5)
        await root.shutdown()
    }

    @Test func readersKeepTheirSnapshotWhileAWriterCommits() async throws {
        let folder = try TemporaryFolder()
        let root = makeRoot(folder)
        let readerStarted = AsyncStream.makeStream(of: Void.self)
        let writerDone = AsyncStream.makeStream(of: Void.self)
        let reader = Task {
            try await root.withScope({ $0.transactionMode = .readOnly }) { () -> [Int] in
                let session = try await ScopedValues.current.sqliteSession
                let before = try await session.scalar("SELECT count(*) FROM movies", as: Int.self) ?? -1
                readerStarted.continuation.yield()
                for await _ in writerDone.stream { break }
                let after = try await session.scalar("SELECT count(*) FROM movies", as: Int.self) ?? -1
                return [before, after]
            }
        }
        for await _ in readerStarted.stream { break }
        try await root.withScope { try await insert("Up") }
        writerDone.continuation.yield()
        #expect(try await reader.value == [0, 0])
        #expect(try await count(root) == 1)
        await root.shutdown()
    }

    @Test func concurrentWritersAllSucceedOneAtATime() async throws {
        let folder = try TemporaryFolder()
        // Two hundred commits in a row, each synced to disk, can outlast the default lease
        // timeout on a busy machine: this test is about every writer's turn coming.
        let root = makeRoot(folder, leaseTimeout: .seconds(600))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<200 {
                group.addTask { try await root.withScope { try await insert("Movie \(index)") } }
            }
            try await group.waitForAll()
        }
        #expect(try await count(root) == 200)
        await root.shutdown()
    }

    @Test func aReadWriteSessionHoldsTheWriterFromItsFirstRead() async throws {
        let folder = try TemporaryFolder()
        let root = makeRoot(folder)
        try await root.withScope {
            let session = try await ScopedValues.current.sqliteSession
            #expect(session.mode == .readWrite)
            #expect(try await session.scalar("SELECT count(*) FROM movies", as: Int.self) == 0)
            #expect(session.isWriting)
            let id = try await session.insert("INSERT INTO movies (title, year) VALUES (\("Up"), \(2009))")
            #expect(id == 1)
            #expect(try await session.scalar("SELECT count(*) FROM movies", as: Int.self) == 1)
        }
        #expect(try await count(root) == 1)
        await root.shutdown()
    }

    @Test func aReadOnlySessionReadsOnAReaderAndRefusesWrites() async throws {
        let folder = try TemporaryFolder()
        let root = makeRoot(folder)
        let error = await #expect(throws: SQLiteError.self) {
            try await root.withScope({ $0.transactionMode = .readOnly }) {
                let session = try await ScopedValues.current.sqliteSession
                #expect(session.mode == .readOnly)
                #expect(try await session.scalar("SELECT count(*) FROM movies", as: Int.self) == 0)
                #expect(session.isActive && !session.isWriting)
                try await session.execute("INSERT INTO movies (title, year) VALUES (\("Up"), \(2009))")
            }
        }
        #expect(error?.code == .readOnly)
        #expect(error?.message.contains("transactionMode = .readOnly") == true)
        #expect(try await count(root) == 0)
        await root.shutdown()
    }

    /// Check-then-write: a rating is inserted only after checking its movie exists, while another request deletes that
    /// movie.
    ///
    /// A `.readWrite` session holds the write lock from the check, so the delete waits and the insert succeeds. A
    /// session that checked in a read transaction and moved to the writer at its first write would let the delete slip
    /// in, and its insert would fail.
    @Test func aConcurrentDeleteCannotSlipBetweenTheCheckAndTheInsertOfAReadWriteSession() async throws {
        let folder = try TemporaryFolder()
        let root = makeRoot(folder)
        try await root.withScope { try await insert("Heat") }
        let events = Recorder<String>()
        let checked = Signal()
        let deleteStarted = Signal()
        let deleter = Task {
            await checked.wait()
            try await root.withScope {
                deleteStarted.fire()
                try await ScopedValues.current.sqliteSession.execute("DELETE FROM movies WHERE title = \("Heat")")
            }
            events.record("deleted")
        }
        var insertError: (any Error)?
        do {
            try await root.withScope({ $0.transactionMode = .readWrite }) {
                let session = try await ScopedValues.current.sqliteSession
                let id = try #require(
                    try await session.scalar("SELECT id FROM movies WHERE title = \("Heat")", as: Int.self)
                )
                checked.fire()
                await deleteStarted.wait()
                // Give the delete every chance to run before the insert.
                try await Task.sleep(for: .milliseconds(50))
                try await session.execute("INSERT INTO ratings (movie_id, stars) VALUES (\(id), \(5))")
                events.record("inserted")
            }
        } catch {
            insertError = error
        }
        try await deleter.value
        #expect(insertError == nil)
        #expect(events.all == ["inserted", "deleted"])
        await root.shutdown()
    }

    @Test func tenThousandSessionsReturnEveryConnection() async throws {
        let folder = try TemporaryFolder()
        // Ten thousand at once on three connections wait longer than the default lease
        // timeout, which would refuse the latest: this test is about every connection coming back.
        let root = makeRoot(folder, readers: 2, leaseTimeout: .seconds(600))
        let database = try await root.withScope { try await ScopedValues.current.sqliteDatabase }
        // Each writer reads its own uncommitted insert back through its session: only the
        // connection that holds its transaction can see it. Each reader counts leased
        // connections while it holds one: never more than the pool has.
        let (unseenWrites, overLeased) = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
            for index in 0..<10_000 {
                group.addTask {
                    try await root.withScope {
                        let session = try await ScopedValues.current.sqliteSession
                        if index % 10 == 0 {
                            let title = "Movie \(index)"
                            try await session.execute("INSERT INTO movies (title, year) VALUES (\(title), \(2000))")
                            let seen = try await session.scalar(
                                "SELECT count(*) FROM movies WHERE title = \(title)",
                                as: Int.self
                            )
                            return (seen == 1 ? 0 : 1, 0)
                        }
                        _ = try await session.scalar("SELECT count(*) FROM movies", as: Int.self)
                        return (0, database.statistics().leased > 3 ? 1 : 0)
                    }
                }
            }
            return try await group.reduce((0, 0)) { ($0.0 + $1.0, $0.1 + $1.1) }
        }
        #expect(unseenWrites == 0)
        #expect(overLeased == 0)
        #expect(database.statistics().connections == 3)
        #expect(database.statistics().leased == 0)
        #expect(try await count(root) == 1_000)
        await root.shutdown()
    }

    @Test func shutdownClosesTheDatabaseAfterOpenSessionsFinish() async throws {
        let folder = try TemporaryFolder()
        let root = makeRoot(folder)
        let opened = AsyncStream.makeStream(of: Void.self)
        let request = Task {
            try await root.withScope {
                try await insert("Up")
                opened.continuation.yield()
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        for await _ in opened.stream { break }
        await root.shutdown()
        try await request.value
        // The write committed before the database closed.
        let reopened = try await SQLiteDatabase.open(SQLiteConfiguration(path: folder.path("catalog.sqlite")))
        #expect(try await reopened.read { try $0.scalar("SELECT count(*) FROM movies", as: Int.self) } == 1)
        await reopened.close()
    }
}
