import ScopedDatabase
import ScopedTesting
import Synchronization
import Testing

// A toy database layer written the way one outside this package would be: on ScopedDatabase's
// public kit (its pool) and the core's public watchdog and test-scope check, nothing else. Its
// connection is the stand-in: what is under test is the kit a real driver would be written on.

private struct DatabaseClosedError: Error {}
private struct LeaseTimeoutError: Error {}
private struct Interrupted: Error {}

/// A connection whose statement `"SLEEP"` runs until it is interrupted, as a statement on a
/// locked table would.
private final class ToyConnection: Sendable {
    private struct State {
        var sleeper: CheckedContinuation<Void, any Error>?
        var interruptPending = false
    }

    private let state = Mutex(State())

    func run(_ statement: String) async throws -> String {
        guard statement == "SLEEP" else { return statement }
        try await withCheckedThrowingContinuation { continuation in
            let interrupted = state.withLock { state in
                if state.interruptPending {
                    state.interruptPending = false
                    return true
                }
                state.sleeper = continuation
                return false
            }
            if interrupted { continuation.resume(throwing: Interrupted()) }
        }
        return statement
    }

    /// Ends the statement that runs, or the next one if none runs yet.
    func interrupt() {
        let sleeper = state.withLock { state in
            defer { state.sleeper = nil }
            if state.sleeper == nil { state.interruptPending = true }
            return state.sleeper
        }
        sleeper?.resume(throwing: Interrupted())
    }
}

/// The toy layer: a pool of connections, each statement bounded by a deadline.
private final class ToyDatabase: Sendable {
    let pool: AsyncPool<ToyConnection>
    let statementTimeout: Duration
    let leaseTimeout: Duration

    init(connections: Int, statementTimeout: Duration, leaseTimeout: Duration) {
        pool = AsyncPool((0..<connections).map { _ in ToyConnection() }) { DatabaseClosedError() }
        self.statementTimeout = statementTimeout
        self.leaseTimeout = leaseTimeout
    }

    func query(_ statement: String) async throws -> String {
        let connection = try await pool.acquire(waitingAtMost: leaseTimeout) { LeaseTimeoutError() }
        defer { pool.release(connection) }
        // SNIPPET-BEGIN
        let deadline = DeadlineWatchdog.shared.register(after: statementTimeout) { connection.interrupt() }
        defer { DeadlineWatchdog.shared.cancel(deadline) }
        return try await connection.run(statement)
        // SNIPPET-END
    }
}

private enum LentTestDatabaseKey: ScopedKey {
    static let defaultValue: ToyDatabase? = nil
}

/// The database a test lent to `values`, found only in a test scope.
private func lentDatabase(in values: ScopedValues) -> ToyDatabase? {
    // SNIPPET-BEGIN
    if values.isTestScope, let lent = values[LentTestDatabaseKey.self] { return lent }
    // SNIPPET-END
    return nil
}

struct DatabaseKitTests {
    @Test func aStatementPastItsDeadlineIsInterruptedAndItsConnectionGoesBackToThePool() async throws {
        let database = ToyDatabase(connections: 1, statementTimeout: .milliseconds(50), leaseTimeout: .seconds(5))
        await #expect(throws: Interrupted.self) { try await database.query("SLEEP") }
        #expect(try await database.query("SELECT 1") == "SELECT 1")
        #expect(database.pool.availableCount == 1)
        _ = await database.pool.close()
    }

    @Test func aWaitForAConnectionEndsAtItsTimeoutAndACloseEndsTheRest() async throws {
        let connections = [ToyConnection()]
        let leaseTimeout = Duration.milliseconds(50)
        // SNIPPET-BEGIN
        let pool = AsyncPool(connections) { DatabaseClosedError() }
        let connection = try await pool.acquire(waitingAtMost: leaseTimeout) { LeaseTimeoutError() }
        defer { pool.release(connection) }
        // SNIPPET-END
        await #expect(throws: LeaseTimeoutError.self) {
            _ = try await pool.acquire(waitingAtMost: leaseTimeout) { LeaseTimeoutError() }
        }
        #expect(pool.waitingCount == 0)
        let waiter = Task { try await pool.acquire() }
        while pool.waitingCount == 0 { await Task.yield() }
        // The close fails the waiter at once; it waits for the leased connection itself.
        let closing = Task { await pool.close() }
        await #expect(throws: DatabaseClosedError.self) { _ = try await waiter.value }
        pool.release(connection)
        #expect(await closing.value.count == 1)
        await #expect(throws: DatabaseClosedError.self) { _ = try await pool.acquire() }
    }

    @Test func aStatementRunWithinATimeoutThrowsTheDatabaseTimeoutNamingTheEntry() async throws {
        let connection = ToyConnection()
        let error = await #expect(throws: DatabaseTimeoutError.self) {
            try await DeadlineWatchdog.shared.run(
                within: .milliseconds(50),
                operation: .statement,
                entry: "toyDatabase",
                expire: { connection.interrupt() }
            ) { try await connection.run("SLEEP") }
        }
        #expect(error?.entry == "toyDatabase")
        #expect(error?.operation == .statement)
    }

    @Test func onlyATestScopeAndTheRootsMadeInItFindTheDatabaseTheTestLent() async throws {
        let lent = ToyDatabase(connections: 1, statementTimeout: .seconds(5), leaseTimeout: .seconds(5))
        try await withTestScope({ $0[LentTestDatabaseKey.self] = lent }) {
            #expect(lentDatabase(in: .current) === lent)
            // An application built inside the test, serving a request.
            let app = ScopeRoot()
            let found = try await app.withScope { lentDatabase(in: .current) }
            #expect(found === lent)
            await app.shutdown()
        }
        // Outside tests, the entry is not used even when something set it.
        let production = ScopeRoot { $0[LentTestDatabaseKey.self] = lent }
        let found = try await production.withScope { lentDatabase(in: .current) }
        #expect(found == nil)
        await production.shutdown()
        _ = await lent.pool.close()
    }
}
