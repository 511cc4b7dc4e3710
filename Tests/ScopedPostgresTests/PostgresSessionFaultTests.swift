import Foundation
import Logging
import NIOPosix
import PostgresNIO
import Scoped
import ScopedDatabase
import ScopedPostgres
import ScopedServiceLifecycle
import ScopedTestSupport
import Testing

/// What a session does when the code using it, or the server under it, misbehaves.
@Suite(postgresAvailable, .loadExclusion)
struct PostgresSessionFaultTests {
    /// A root on the fixture's database with short deadlines.
    private func withRoot<R: Sendable>(
        _ fixture: PostgresFixture,
        maximumConnections: Int = 4,
        leaseTimeout: Duration = .seconds(5),
        // Long enough that a healthy statement never reaches it while the rest of the suite
        // loads both cores (0.5 s did, in CI); short enough that a frozen server shows quickly.
        statementTimeout: Duration = .seconds(2),
        _ body: (ScopeRoot) async throws -> R
    ) async throws -> R {
        var configuration = try PostgresConfiguration(
            url: fixture.url,
            maximumConnections: maximumConnections,
            migrations: itemMigrations
        )
        configuration.leaseTimeout = leaseTimeout
        configuration.statementTimeout = statementTimeout
        let root = ScopeRoot(services: [PostgresClientKey.self, PostgresDatabaseKey.self, PostgresSessionKey.self]) {
            $0.postgresConfiguration = configuration
        }
        return try await root.withRunningServices(logger: Logger(label: "test")) {
            try #require(await root.validate().isEmpty)
            return try await body(root)
        }
    }

    @Test func aSessionUsedAfterItsScopeEndedThrowsScopeEndedAndLeasesNothing() async throws {
        let fixture = try await PostgresFixture()
        // Nothing here is about deadlines: a generous one (its commit took over 2 s in CI).
        try await withRoot(fixture, statementTimeout: .seconds(10)) { root in
            let kept = try await root.withScope {
                let session = try await ScopedValues.current.postgresSession
                try await session.execute("INSERT INTO items (name) VALUES (\("kept"))")
                return session
            }
            await #expect(throws: ScopedError.scopeEnded(entry: "postgresSession")) {
                try await kept.execute("INSERT INTO items (name) VALUES (\("late"))")
            }
            let database = try await root.withScope { try await ScopedValues.current.postgresDatabase }
            #expect(database.statistics().leased == 0)
        }
        #expect(try await fixture.itemCount() == 1)
    }

    @Test(arguments: ["fast", "immediate"])
    func afterARestartDeadConnectionsAreReplacedAndWritesSucceedAgain(mode: String) async throws {
        let fixture = try await PostgresFixture(server: .dedicated())
        // No statement here is meant to reach its deadline: a generous one, since the cluster's
        // first statements after its restart read from a disk a build beside the tests may keep
        // busy (2 s was passed there).
        try await withRoot(fixture, maximumConnections: 4, statementTimeout: .seconds(10)) { root in
            // Four writers at once: every connection of the pool is open when the server restarts.
            try await withThrowingTaskGroup { group in
                for writer in 0..<4 {
                    group.addTask {
                        try await root.withScope {
                            let session = try await ScopedValues.current.postgresSession
                            try await session.execute("INSERT INTO items (name) VALUES (\("before \(writer)"))")
                            _ = try await session.query("SELECT pg_sleep(0.1)")
                        }
                    }
                }
                try await group.waitForAll()
            }
            try await fixture.server.restart(mode: mode)
            // Each dead connection may fail one request, as connection lost (503), never as a
            // hang; then a connection to the restarted server serves the writes.
            let restarted = ContinuousClock.now
            var refusals: [String] = []
            var written = 0
            while written < 8 && ContinuousClock.now - restarted < .seconds(10) {
                let attempt = ContinuousClock.now
                do {
                    _ = try await root.withScope {
                        try await ScopedValues.current.postgresSession.execute(
                            "INSERT INTO items (name) VALUES (\("after \(written)"))"
                        )
                    }
                    written += 1
                } catch let error as PostgresDatabaseError {
                    refusals.append(error.kind.rawValue)
                }
                // Well under the 10 s statement deadline a hang would wait for; not a tight
                // window (beside a build an attempt once took 3.14 s).
                #expect(ContinuousClock.now - attempt < .seconds(6))
            }
            #expect(written == 8)
            #expect(refusals.allSatisfy { $0 == PostgresDatabaseError.Kind.connectionLost.rawValue }, "\(refusals)")
            #expect(refusals.count <= 4, "\(refusals)")
            let database = try await root.withScope { try await ScopedValues.current.postgresDatabase }
            #expect(database.statistics().leased == 0)
        }
        #expect(try await fixture.itemCount() == 12)
    }

    @Test func aFrozenServerFailsTheStatementAtItsDeadlineAndTheConnectionIsDiscarded() async throws {
        // A cluster of its own: a backend stopped mid-work may hold a lock of the cluster's
        // shared memory, which would stall other tests' statements on a shared server, and
        // theirs, ours. (Its next statement ran past 2 s in 3 of about 12 full runs beside the
        // other suites on the shared server, never alone.)
        let fixture = try await PostgresFixture(server: .dedicated())
        try await withRoot(fixture) { root in
            let frozen = Recorder<Int32>()
            // Timed from the freeze, not from the scope's start: connecting and the first query
            // take what a loaded machine gives them, and only the frozen statement is bounded.
            let frozenAt = Recorder<ContinuousClock.Instant>()
            let error = await #expect(throws: DatabaseTimeoutError.self) {
                try await root.withScope {
                    let session = try await ScopedValues.current.postgresSession
                    let pid = try await session.query("SELECT pg_backend_pid()")[0].decode(Int32.self)
                    // The server process behind this connection stops answering, as a frozen
                    // server or a partition looks from here.
                    kill(pid, SIGSTOP)
                    frozen.record(pid)
                    frozenAt.record(.now)
                    try await session.execute("INSERT INTO items (name) VALUES (\("lost"))")
                }
            }
            for pid in frozen.all { kill(pid, SIGCONT) }
            #expect(error?.operation == .statement)
            let frozenFor = try #require(frozenAt.all.first).duration(to: .now)
            #expect(frozenFor < .seconds(4), "the statement's deadline is 2 s; it failed after \(frozenFor)")
            // Nothing is left leased, and the next request is served on another connection.
            let database = try await root.withScope { try await ScopedValues.current.postgresDatabase }
            #expect(database.statistics().leased == 0)
            // The closed connection went back only once closed: the next request gets another.
            // (Until the session waited for the close, in about one full suite run in three the
            // next statement was sent on the closing connection, which drops it, and ran into
            // its deadline too.)
            _ = try await root.withScope {
                try await ScopedValues.current.postgresSession.execute("INSERT INTO items (name) VALUES (\("next"))")
            }
        }
        #expect(try await fixture.itemCount() == 1)
    }

    /// A connection that a deadline closed goes back to the pool only once its close has completed.
    ///
    /// postgres-nio fails the statement before its channel is inactive, and an event
    /// loop that runs late runs the close later still: given back at once, the closing
    /// connection was idle to the pool and the next session's statements failed on it
    /// (`clientClosedConnection`, seen in a full suite run).
    @Test func aConnectionADeadlineClosedIsNotLeasedAgainBeforeItsCloseCompletes() async throws {
        let fixture = try await PostgresFixture()
        _ = try await fixture.server.psql("CREATE TABLE items (name text NOT NULL)", database: fixture.database)
        // An event loop of the test's own, which it stops: the shared one serves other tests.
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        var configuration = try PostgresConfiguration(url: fixture.url, maximumConnections: 1).clientConfiguration
        // postgres-nio replaces a closed connection for a session already waiting only to keep
        // its minimum (a new request starts one); with none kept, the next session would wait
        // for its lease timeout.
        configuration.options.minimumConnections = 1
        let logger = Logger(label: "test")
        let client = PostgresClient(configuration: configuration, eventLoopGroup: group, backgroundLogger: logger)
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { await client.run() }
            defer { tasks.cancelAll() }
            let session = { PostgresSession(client: client, logger: logger, statementTimeout: .milliseconds(300)) }
            let first = session()
            try await first.execute("INSERT INTO items (name) VALUES (\("lost"))")
            // The loop stops with the connection leased; the next statement passes its deadline
            // (its close waits for the loop) and is abandoned a second later.
            let stopped = DispatchSemaphore(value: 0)
            group.next().execute { stopped.wait() }
            defer { stopped.signal() }  // a second signal is harmless
            await #expect(throws: DatabaseTimeoutError.self) { try await first.execute("SELECT 1") }
            await #expect(throws: PostgresDatabaseError.self) { try await first.finish(.failure(CancellationError())) }
            // The next session asks for the one connection while the loop is still stopped,
            // and gets a new one once the close has run.
            let second = session()
            let next = Task { try await second.execute("INSERT INTO items (name) VALUES (\("next"))") }
            try await Task.sleep(for: .milliseconds(300))
            stopped.signal()
            do {
                _ = try await next.value
                try await second.finish(.success)
            } catch {
                try? await second.finish(.failure(error))
                Issue.record("the next session failed: \(error)")
            }
        }
        try await group.shutdownGracefully()
        #expect(try await fixture.itemCount() == 1)
    }

    @Test func aSessionWaitsForAConnectionOnlyUntilItsLeaseTimeout() async throws {
        let fixture = try await PostgresFixture()
        // The statements are not under test: a deadline a loaded machine does not reach (beside a
        // build, the holder's commit once took over the suite's 2 s).
        try await withRoot(
            fixture,
            maximumConnections: 1,
            leaseTimeout: .milliseconds(300),
            statementTimeout: .seconds(10)
        ) {
            root in
            let holding = AsyncStream.makeStream(of: Void.self)
            let release = Signal()
            let holder = Task {
                try await root.withScope {
                    try await ScopedValues.current.postgresSession.execute("SELECT 1")
                    holding.continuation.yield()
                    await release.wait()
                }
            }
            for await _ in holding.stream { break }
            let error = await #expect(throws: DatabaseTimeoutError.self) {
                try await root.withScope { try await ScopedValues.current.postgresSession.execute("SELECT 1") }
            }
            #expect(error?.operation == .lease)
            release.fire()
            try await holder.value
            // The connection the late lease would have taken went back: the pool serves again.
            _ = try await root.withScope { try await ScopedValues.current.postgresSession.execute("SELECT 1") }
        }
    }

    /// A statement's deadline bounds the statement, not its task's wait for a thread once the
    /// server has answered: under a loaded machine that wait ran past the timeout, the deadline
    /// closed a connection whose statement had finished, and the commit was lost.
    @Test func aFinishedStatementIsNotCutOffWhileItsTaskWaitsForItsExecutor() async throws {
        let fixture = try await PostgresFixture()
        // A deadline of seconds: it also counts the sending and the server's 300 ms, and beside a
        // build 2 s was passed before the answer came.
        try await withRoot(fixture, statementTimeout: .seconds(5)) { root in
            let database = try await root.withScope { try await ScopedValues.current.postgresDatabase }
            let session = PostgresSession(database: database)
            let runner = StatementRunner()
            defer { runner.executor.stop() }
            do {
                try await session.execute("INSERT INTO items (name) VALUES (\("first"))")
                // Sent from the runner's thread; the server answers after 300 ms, while that
                // thread is stopped for six seconds, past the statement's deadline.
                let sleeping = Task { try await runner.sleep(in: session) }
                try await Task.sleep(for: .milliseconds(100))
                let held = DispatchSemaphore(value: 0)
                runner.executor.block(until: held)
                try await Task.sleep(for: .seconds(6))
                held.signal()
                try await sleeping.value
                // The connection is still the session's, its transaction whole: both rows commit.
                try await session.execute("INSERT INTO items (name) VALUES (\("second"))")
                try await session.finish(.success)
            } catch {
                // The connection goes back to the client even when the test fails.
                try? await session.finish(.failure(error))
                throw error
            }
        }
        #expect(try await fixture.itemCount() == 2)
    }
}

/// Runs a session's statement from an executor of its own, which the test can stop.
private actor StatementRunner {
    nonisolated let executor = ThreadExecutor()
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    func sleep(in session: PostgresSession) async throws {
        _ = try await session.query("SELECT pg_sleep(0.3)")
    }
}
