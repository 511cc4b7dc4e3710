import Foundation
import Scoped
import ScopedDatabase
@testable import ScopedSQLite
import ScopedTestSupport
import Synchronization
import Testing

/// The writer goes to the next session as soon as a session's commit returns, not once the
/// finishing task has found a thread to resume on: under load that wait was most of a write's
/// time, all of it holding the one writer.
@Suite(.loadExclusion)
struct WriterHandOverTests {
    @Test func theNextWriterGetsTheWriterWhileTheFinishingTaskWaitsForItsExecutor() async throws {
        let folder = try TemporaryFolder()
        let database = try await SQLiteDatabase.open(
            SQLiteConfiguration(
                path: folder.path("catalog.sqlite"),
                migrations: movieSchema,
                leaseTimeout: .seconds(20)
            )
        )
        let first = SQLiteSession(database: database)
        try await first.insert("INSERT INTO movies (title, year) VALUES (\("Heat"), \(1995))")

        // The writer thread is held, so the first session's commit waits there.
        let writerHeld = DispatchSemaphore(value: 0)
        let holding = Task { try await database.writerThread.run { writerHeld.wait() } }
        // The first session finishes from an actor whose thread the test stops once the commit
        // has been queued on the writer thread: the task cannot resume until the test lets it.
        let finisher = Finisher()
        let finished = Task { try await finisher.finish(first) }
        while first.isActive { try await Task.sleep(for: .milliseconds(1)) }
        // Queued behind the finishing job now running on the actor's thread (its lease taken,
        // about to hop to the writer thread): it runs once that job has hopped.
        let actorHeld = DispatchSemaphore(value: 0)
        finisher.executor.block(until: actorHeld)
        writerHeld.signal()
        try await holding.value

        // Another session leases the writer, writes and commits while the first task still
        // cannot run.
        let secondCommitted = Atomic<Bool>(false)
        let second = Task {
            let next = SQLiteSession(database: database)
            try await next.insert("INSERT INTO movies (title, year) VALUES (\("Alien"), \(1979))")
            try await next.finish(.success)
            secondCommitted.store(true, ordering: .releasing)
        }
        let secondEnded = await eventually(within: .seconds(10)) { secondCommitted.load(ordering: .acquiring) }
        #expect(secondEnded, "the second session did not get the writer while the first task waited")
        actorHeld.signal()
        try await finished.value
        try await second.value
        #expect(try await database.read { try $0.scalar("SELECT count(*) FROM movies", as: Int.self) } == 2)
        await database.close()
        finisher.executor.stop()
    }

    /// A writer statement's deadline bounds the statement, not the wait for its task's thread
    /// afterwards: under a loaded machine that wait ran past the timeout, the deadline
    /// interrupted a connection whose statement had finished, and the commit failed.
    @Test func aFinishedWriterStatementIsNotInterruptedWhileItsTaskWaitsForItsExecutor() async throws {
        let folder = try TemporaryFolder()
        let database = try await SQLiteDatabase.open(
            SQLiteConfiguration(
                path: folder.path("catalog.sqlite"),
                migrations: movieSchema,
                // Its deadline also counts the statement's wait for the held writer thread below
                // (100 ms, and whatever a loaded machine adds: 2 s was passed beside a build).
                statementTimeout: .seconds(5)
            )
        )
        let session = SQLiteSession(database: database)
        try await session.insert("INSERT INTO movies (title, year) VALUES (\("Heat"), \(1995))")
        // The writer thread is held, so the next statement waits there, queued.
        let writerHeld = DispatchSemaphore(value: 0)
        let holding = Task { try await database.writerThread.run { writerHeld.wait() } }
        let runner = Finisher()
        let inserted = Task { try await runner.insert("Alien", in: session) }
        // The statement is queued on the writer thread once the actor's job has run; then the
        // actor's thread is stopped, so the statement's task cannot resume when it ends.
        try await Task.sleep(for: .milliseconds(100))
        let actorHeld = DispatchSemaphore(value: 0)
        runner.executor.block(until: actorHeld)
        writerHeld.signal()
        try await holding.value
        // The statement runs in a moment; its task waits past its timeout for its thread.
        try await Task.sleep(for: .seconds(6))
        actorHeld.signal()
        try await inserted.value
        // The session's transaction is whole: it commits both rows.
        try await session.finish(.success)
        #expect(try await database.read { try $0.scalar("SELECT count(*) FROM movies", as: Int.self) } == 2)
        await database.close()
        runner.executor.stop()
    }
}

/// Finishes sessions, and runs their statements, on its own thread.
private actor Finisher {
    nonisolated let executor = ThreadExecutor()
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    func finish(_ session: SQLiteSession) async throws {
        try await session.finish(.success)
    }

    func insert(_ title: String, in session: SQLiteSession) async throws {
        _ = try await session.insert("INSERT INTO movies (title, year) VALUES (\(title), \(2001))")
    }
}
