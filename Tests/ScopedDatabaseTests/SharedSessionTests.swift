import Scoped
import ScopedDatabase
import ScopedPostgres
import ScopedSQLite
import ScopedTestSupport
import SessionTestSupport
import Synchronization
import Testing

private struct Failure: Error {}

/// What every database session promises, written once and run on SQLite and on PostgreSQL.
@Suite(.loadExclusion)
struct SharedSessionTests {
    private func committed(_ root: ScopeRoot, _ backend: SessionBackend) async throws -> [String] {
        try await root.withScope({ $0.transactionMode = .readOnly }) { try await backend.session().names() }
    }

    @Test(arguments: SessionBackend.available)
    func aScopeThatEndsWellCommitsAndOneThatThrowsRollsBack(backend: SessionBackend) async throws {
        try await backend.withRoot { root in
            _ = try await root.withScope { try await backend.session().insert("kept") }
            await #expect(throws: Failure.self) {
                try await root.withScope {
                    _ = try await backend.session().insert("thrown")
                    throw Failure()
                }
            }
            #expect(try await committed(root, backend) == ["kept"])
        }
    }

    @Test(arguments: SessionBackend.available)
    func executeReturnsTheRowsItChanged(backend: SessionBackend) async throws {
        try await backend.withRoot { root in
            let changed = try await root.withScope {
                let session = try await backend.session()
                var inserted = 0
                for name in ["a", "b", "c"] { inserted += try await session.insert(name) }
                return [inserted, try await session.renameAll()]
            }
            #expect(changed == [3, 3])
            #expect(try await committed(root, backend) == ["a!", "b!", "c!"])
        }
    }

    @Test(arguments: SessionBackend.available)
    func aReadOnlyScopeCannotWriteAndCommitsNothing(backend: SessionBackend) async throws {
        try await backend.withRoot { root in
            let error = await #expect(throws: (any Error).self) {
                try await root.withScope({ $0.transactionMode = .readOnly }) {
                    _ = try await backend.session().insert("read")
                }
            }
            switch backend {
            case .sqlite: #expect((error as? SQLiteError)?.code == .readOnly)
            case .postgres: #expect((error as? PostgresDatabaseError)?.sqlState == "25006")
            }
            let names = try await committed(root, backend)
            #expect(names.isEmpty)
        }
    }

    @Test(arguments: SessionBackend.available)
    func aSessionKeptPastItsScopeIsRefusedAndLeasesNothing(backend: SessionBackend) async throws {
        try await backend.withRoot { root in
            let kept = try await root.withScope {
                let session = try await backend.session()
                _ = try await session.insert("in scope")
                return session
            }
            // As an unstructured task that kept the session past its request would use it.
            await #expect(throws: ScopedError.scopeEnded(entry: backend.sessionEntry)) {
                _ = try await kept.insert("after")
            }
            #expect(try await root.withScope { try await backend.leased() } == 0)
            #expect(try await committed(root, backend) == ["in scope"])
        }
    }

    @Test(arguments: SessionBackend.available)
    func aScopeThatNeverUsesItsSessionLeasesNothing(backend: SessionBackend) async throws {
        try await backend.withRoot { root in
            let leased = try await root.withScope {
                _ = try await backend.session()
                return try await backend.leased()
            }
            #expect(leased == 0)
        }
    }

    @Test(arguments: SessionBackend.available)
    func concurrentChildTasksTakeTurnsOnTheSessionsOneTransaction(backend: SessionBackend) async throws {
        // Its property is turn-taking, not time: generous deadlines. Beside a build, as the suite
        // started, a statement once ran past 5 s; and in CI (stop 47's check) the last of the 20
        // waited past the 5 s lease timeout for its turn behind the other 19.
        try await backend.withRoot(statementTimeout: .seconds(30), leaseTimeout: .seconds(30)) { root in
            try await root.withScope {
                let session = try await backend.session()
                try await withThrowingTaskGroup(of: Int.self) { group in
                    for index in 0..<20 { group.addTask { try await session.insert("item \(index)") } }
                    var total = 0
                    for try await changed in group { total += changed }
                    #expect(total == 20)
                }
                #expect(try await backend.leased() == 1)
            }
            #expect(try await committed(root, backend).count == 20)
        }
    }

    @Test(arguments: SessionBackend.available)
    func aStatementPastItsDeadlineFailsTheScopeWithATimeoutAndTheNextScopeWorks(backend: SessionBackend) async throws {
        // A deadline of seconds, not less: the next scope's statements must finish within it
        // too, and on a 2-core machine running the whole suite (CI) one took over 1 s, and once
        // (stop 45's check, PostgreSQL) over 3 s. The slow statement holds only its own
        // database's writer thread until the deadline, so a longer one costs this test alone.
        try await backend.withRoot(statementTimeout: .seconds(6)) { root in
            let clock = ContinuousClock()
            let started = clock.now
            let error = await #expect(throws: DatabaseTimeoutError.self) {
                try await root.withScope {
                    let session = try await backend.session()
                    _ = try await session.insert("lost")
                    try await session.runSlowStatement()
                }
            }
            // The slow statement alone runs for 30 s or more; on a busy machine the deadline's
            // interrupt and the rollback take a few seconds more than the deadline.
            #expect(clock.now - started < .seconds(20))
            #expect(error?.operation == .statement)
            #expect(error?.entry == backend.sessionEntry)
            _ = try await root.withScope { try await backend.session().insert("next") }
            #expect(try await committed(root, backend) == ["next"])
            #expect(try await root.withScope { try await backend.leased() } == 0)
        }
    }

    @Test(arguments: SessionBackend.available)
    func finishingWaitsForTheStatementInFlight(backend: SessionBackend) async throws {
        try await backend.withRoot(statementTimeout: .seconds(2)) { root in
            let scope = root.openScope()
            let session = try await scope.run { try await backend.session() }
            if backend == .postgres {
                // A PostgreSQL session leases its connection and begins its transaction with its
                // first statement, the BEGIN under the same deadline: begun here, what reaches the
                // deadline below is the slow statement. (Beside a build, a BEGIN once took longer
                // than the deadline: the session then held nothing, and its close had nothing
                // to fail.)
                _ = try await session.names()
            }
            let ended = Atomic<Bool>(false)
            let statement = Task {
                defer { ended.store(true, ordering: .relaxed) }
                try await session.runSlowStatement()
            }
            // The scope closes once the statement runs: closing earlier would refuse the
            // statement, as it must. (A PostgreSQL connection counts as leased before the session
            // has stored it: closing then, in CI, refused the statement and committed nothing.
            // Its transaction begun above, a statement that already ended at its deadline ran.)
            let running = try await eventually(within: .seconds(20)) {
                if backend == .postgres && ended.load(ordering: .relaxed) { return true }
                return (try? await root.withScope { try await backend.slowStatementRuns() }) == true
            }
            try #require(running, "the statement never ran")
            // The scope ends well while the statement runs. A session that waits for the
            // statement sees its deadline end the transaction and says so; one that did not
            // wait would commit beside a running statement. (Not the order in which the two
            // tasks resume afterwards: both return at once, in either order.)
            let closeError = await #expect(throws: ScopeCloseError.self) { try await scope.close(.success) }
            let failure = try #require(closeError?.failures.first?.error)
            switch backend {
            case .sqlite:
                // Not SQLite's "cannot commit - SQL statements in progress".
                #expect((failure as? DatabaseTimeoutError)?.operation == .statement)
            case .postgres:
                // The deadline closed the connection, and the transaction ended with it.
                #expect((failure as? PostgresDatabaseError)?.kind == .connectionLost)
            }
            await #expect(throws: DatabaseTimeoutError.self) { try await statement.value }
            // Given back, though not necessarily yet: a PostgreSQL connection that a deadline
            // closed goes back once its close has completed, and the scope waits for that at
            // most a second (beside a build, longer was seen).
            #expect(
                try await eventually(within: .seconds(10)) {
                    try await root.withScope { try await backend.leased() } == 0
                }
            )
        }
    }

    /// The session closes inline, in the scope's own task: a task cancelled as its scope ends
    /// still commits what succeeded and rolls back what failed, and gives its connection back.
    @Test(arguments: SessionBackend.available)
    func aCancelledTaskStillCommitsOrRollsBackItsScope(backend: SessionBackend) async throws {
        try await backend.withRoot { root in
            for (name, fails) in [("kept", false), ("rolled back", true)] {
                let inserted = Atomic<Bool>(false)
                let task = Task {
                    try await root.withScope {
                        _ = try await backend.session().insert(name)
                        inserted.store(true, ordering: .releasing)
                        // The scope ends once its task is cancelled: well, or with the error.
                        while !Task.isCancelled { await Task.yield() }
                        if fails { throw CancellationError() }
                    }
                }
                while !inserted.load(ordering: .acquiring) { await Task.yield() }
                task.cancel()
                if fails {
                    await #expect(throws: CancellationError.self) { try await task.value }
                } else {
                    try await task.value
                }
            }
            #expect(try await committed(root, backend) == ["kept"])
            #expect(try await root.withScope { try await backend.leased() } == 0)
        }
    }

    @Test(arguments: SessionBackend.available)
    func aMissingConfigurationNamesTheEntryAndHowToSetIt(backend: SessionBackend) async throws {
        let root = backend.unconfiguredRoot()
        let problems = await root.validate()
        let problem = try #require(problems.first { $0.entry == backend.databaseEntry })
        let configurationEntry = backend == .sqlite ? "sqliteConfiguration" : "postgresConfiguration"
        #expect(problem.message.contains("set `$0.\(configurationEntry)` on the application root"))
        await root.shutdown()
    }
}
