import FluentKit
import NIOCore
public import Scoped
public import ScopedDatabase
import SQLKit
import Synchronization

/// The Fluent databases a test's application wraps with `.scoped(…)`, each test inside a
/// transaction of its own that is rolled back when it ends, for ScopedTesting's
/// `.scoped(database:)` trait.
///
/// ```swift
/// @Test(.scoped(database: .fluent))
/// func postingATodoStoresIt() async throws {
///     try await withTodoApp { app in
///         try await app.testing().test(.POST, "todos", beforeRequest: { try $0.content.encode(Todo(title: "milk")) })
///         #expect(try await Todo.query(on: app.db).count() == 1)
///     }
/// }
/// ```
///
/// Give the test's application its database as in production,
/// `app.databases.use(.scoped(.postgres(…)), as: .psql)`, on a database every test shares. The
/// test's first query through it leases one connection and begins the test's transaction on
/// it; everything the test does through that database then runs there, and is rolled back
/// when the test ends (or when the application shuts down, if that comes first):
/// - a request scope (each request behind `RequestScopeMiddleware`, on a root built inside the
///   test) runs in a savepoint of the test's transaction, released when the scope ends well
///   and rolled back to otherwise, so a request's commit and rollback behave as in production;
///   a `.readOnly` scope's writes fail, on PostgreSQL, as they would in production;
/// - a query made outside any request scope (the test's own body or a `withScope` in it,
///   `app.autoMigrate()`) runs in a savepoint of its own, as it would commit on its own in
///   production; one that fails leaves the test's transaction usable. A `transaction(_:)`
///   there runs each of its statements so too.
///
/// The scopes and queries of one test take turns on its connection: a request scope holds it
/// from its first query to its end, for at most `turnTimeout` of another's waiting. Tests
/// therefore run in parallel on one database, see no one else's rows, and clean up nothing.
/// Two tests that create the same table or write the same unique key wait for each other's
/// rollback, as on any database.
public struct FluentTestDatabase: TestDatabase {
    /// How long a query or request scope of the test waits for the test's connection while
    /// another scope of the test holds it; then it fails with `DatabaseTimeoutError`.
    public var turnTimeout: Duration

    /// A test database whose scopes wait at most `turnTimeout` for the test's connection.
    public init(turnTimeout: Duration = .seconds(10)) {
        self.turnTimeout = turnTimeout
    }

    /// Runs `body` with the update that sends the test's Fluent queries to its transaction,
    /// then rolls that transaction back and returns its connection.
    public func withIsolation<R: Sendable>(
        for test: String,
        _ body: (_ isolate: @escaping @Sendable (inout ScopedValues) -> Void) async throws -> R
    ) async throws -> R {
        let transaction = FluentTestTransaction(turnTimeout: turnTimeout)
        let result: Result<R, any Error>
        do {
            result = .success(try await body { $0[FluentTestTransactionKey.self] = transaction })
        } catch {
            result = .failure(error)
        }
        await transaction.rollBack()
        return try result.get()
    }
}

extension TestDatabase where Self == FluentTestDatabase {
    /// The test application's `.scoped(…)` Fluent databases, each test in a transaction
    /// rolled back when it ends.
    public static var fluent: FluentTestDatabase { FluentTestDatabase() }
}

/// The transaction a test lent to its Fluent queries; unset outside `.scoped(database: .fluent)`.
enum FluentTestTransactionKey: ScopedKey {
    static var defaultValue: FluentTestTransaction? { nil }
}

/// A test's transactions: one per wrapped database the test used, each on a connection of
/// its own.
final class FluentTestTransaction: Sendable {
    let turnTimeout: Duration
    private let state = Mutex(State())

    private struct State {
        /// The driver is kept, not its identifier: another driver may take a freed one's address.
        var connections: [(driver: ScopedDatabaseDriver, connection: FluentTestConnection)] = []
        var isRolledBack = false
    }

    init(turnTimeout: Duration) {
        self.turnTimeout = turnTimeout
    }

    /// The test's connection to `driver`'s database, its transaction begun on `base` by this
    /// call if it is the test's first query there.
    ///
    /// - Throws: `ScopedError.scopeEnded(entry:)` once the test has ended.
    func connection(to driver: ScopedDatabaseDriver, beginningWith base: any Database) throws -> FluentTestConnection {
        let (connection, isNew) = try state.withLock { state in
            guard !state.isRolledBack else { throw ScopedError.scopeEnded(entry: FluentTestConnection.entry) }
            if let found = state.connections.first(where: { $0.driver === driver }) {
                return (found.connection, false)
            }
            let connection = FluentTestConnection(
                on: base.eventLoop,
                turnTimeout: turnTimeout,
                commitTimeout: driver.commitTimeout
            )
            state.connections.append((driver, connection))
            return (connection, true)
        }
        if isNew {
            connection.begin(on: base)
            driver.adopt(connection)
        }
        return connection
    }

    /// Rolls back every transaction of the test and returns their connections, once the scope
    /// holding each has ended; refuses later queries.
    func rollBack() async {
        // Emptied, too: a driver made in the test refers to this transaction.
        let connections = state.withLock { state in
            state.isRolledBack = true
            defer { state.connections = [] }
            return state.connections.map(\.connection)
        }
        for connection in connections { await connection.rollBack() }
    }
}

/// One connection a test leased, in the test's open transaction, which its request scopes and
/// queries take turns on.
final class FluentTestConnection: Sendable {
    static let entry = "fluentTestTransaction"

    /// The test's transaction, which is never committed.
    private let transaction: FluentTransaction
    /// One scope or query of the test at a time holds the connection.
    private let turn: AsyncPool<Int>
    private let turnTimeout: Duration
    private let isRolledBack = Mutex(false)

    init(on eventLoop: any EventLoop, turnTimeout: Duration, commitTimeout: Duration) {
        transaction = FluentTransaction(on: eventLoop, commitTimeout: commitTimeout)
        turn = AsyncPool([0]) { ScopedError.scopeEnded(entry: FluentTestConnection.entry) }
        self.turnTimeout = turnTimeout
    }

    /// Leases a connection of `base` and begins the test's transaction on it.
    fileprivate func begin(on base: any Database) {
        transaction.begin(on: base, mode: .readWrite)
    }

    /// Runs `body` on the test's connection once it is this caller's turn, and gives the turn
    /// back when the future `body` returns has completed.
    ///
    /// A test's scopes are few and short, so the wait is a task of its own: no request in
    /// production comes here.
    func withTurn<T: Sendable>(
        on eventLoop: any EventLoop,
        _ body: @escaping @Sendable (any Database) -> EventLoopFuture<T>
    ) -> EventLoopFuture<T> {
        let turn = turn
        let timeout = turnTimeout
        return
            eventLoop.makeFutureWithTask {
                try await turn.acquire(waitingAtMost: timeout) {
                    DatabaseTimeoutError(operation: .lease, timeout: timeout, entry: FluentTestConnection.entry)
                }
            }
            .flatMap { permit in
                self.transaction.connection.flatMap(body).always { _ in turn.release(permit) }
            }
    }

    /// Runs `body` in a savepoint of its own, as a query outside any request scope would run
    /// in a transaction of its own: released when it succeeds, rolled back to when it fails.
    func runOnItsOwn<T: Sendable>(
        on eventLoop: any EventLoop,
        _ body: @escaping @Sendable (any Database) -> EventLoopFuture<T>
    ) -> EventLoopFuture<T> {
        withTurn(on: eventLoop) { connection in
            Savepoint.around(on: connection, mode: .readWrite) { body(connection) }
        }
    }

    /// Whether the test's transaction has been rolled back (or is being rolled back).
    var hasRolledBack: Bool { isRolledBack.withLock { $0 } }

    /// Rolls the test's transaction back and returns the connection, once the scope holding
    /// it has ended or the turn timeout has passed.
    ///
    /// Only the first call does; later ones return at once.
    func rollBack() async {
        let isFirst = isRolledBack.withLock { isRolledBack in
            defer { isRolledBack = true }
            return !isRolledBack
        }
        guard isFirst else { return }
        let turn = turn
        _ = try? await DeadlineWatchdog.shared.run({ _ = await turn.close() }, abandoningAfter: turnTimeout) {
            CancellationError()
        }
        try? await transaction.end(.cancelled)
    }
}

/// The statements that open and end a savepoint of a test's transaction.
enum Savepoint {
    /// Opens a savepoint, runs `work` in it, and ends it as `work`'s future ends: released
    /// when it succeeds, rolled back to when it fails (the failure is passed on).
    static func around<T: Sendable>(
        on connection: any Database,
        mode: TransactionMode,
        _ work: @escaping @Sendable () -> EventLoopFuture<T>
    ) -> EventLoopFuture<T> {
        begin(on: connection, mode: mode)
            .flatMap {
                work()
                    .flatMap { result in end(on: connection, commits: true, mode: mode).map { result } }
                    .flatMapError { error in
                        end(on: connection, commits: false, mode: mode).flatMapThrowing { throw error }
                    }
            }
    }

    /// Opens the savepoint; read-only on PostgreSQL when `mode` is read-only.
    static func begin(on connection: any Database, mode: TransactionMode) -> EventLoopFuture<Void> {
        guard let sql = connection as? any SQLDatabase else {
            return connection.eventLoop.makeFailedFuture(ScopedFluentError.notSQL)
        }
        let savepoint = sql.raw("SAVEPOINT scoped_fluent").run()
        guard mode.isReadOnly, sql.dialect.name == "postgresql" else { return savepoint }
        return savepoint.flatMap { sql.raw("SET LOCAL transaction_read_only = on").run() }
    }

    /// Releases the savepoint when `commits` and the scope could write; rolls back to it
    /// otherwise, which also undoes a read-only scope's setting.
    static func end(on connection: any Database, commits: Bool, mode: TransactionMode) -> EventLoopFuture<Void> {
        guard let sql = connection as? any SQLDatabase else {
            return connection.eventLoop.makeFailedFuture(ScopedFluentError.notSQL)
        }
        if commits && mode == .readWrite { return sql.raw("RELEASE SAVEPOINT scoped_fluent").run() }
        return sql.raw("ROLLBACK TO SAVEPOINT scoped_fluent").run()
            .flatMap { sql.raw("RELEASE SAVEPOINT scoped_fluent").run() }
    }
}
