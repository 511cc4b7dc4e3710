import FluentKit
import SQLKit
import NIOCore
import Scoped
import ScopedDatabase
import Synchronization

/// A request scope's Fluent transactions: one per database its queries used, begun by the
/// first query and ended with the scope.
///
/// Statements make and find it with `ScopedValues.scopeServiceWithoutWaiting(_:makingWith:)`:
/// a future-based driver's statement cannot wait for a build.
enum FluentTransactionsKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.scope
    static var name: String { "fluentTransactions" }

    static func makeValue() -> FluentTransactions { FluentTransactions() }

    static func close(_ transactions: FluentTransactions, outcome: ScopeOutcome) async throws {
        try await transactions.end(outcome)
    }

    /// Each commit is bounded by its database's `commitTimeout`, on the watchdog: no task.
    static var closeBoundsItself: Bool { true }
}

final class FluentTransactions: Sendable {
    private struct State {
        /// Few per scope (usually one): a list beats a dictionary.
        var transactions: [(driver: ObjectIdentifier, transaction: FluentTransaction)] = []
        var isEnded = false
    }

    private let state = Mutex(State())

    /// The scope's transaction on `driver`'s database, begun on `base` in `mode` if this is
    /// its first statement there.
    ///
    /// Under `.scoped(database: .fluent)`, the transaction is a savepoint of `test`'s.
    ///
    /// - Throws: `ScopedError.scopeEnded(entry:)` once the scope has ended.
    func transaction(
        on driver: ScopedDatabaseDriver,
        beginningWith base: any Database,
        mode: TransactionMode,
        test: FluentTestTransaction?
    ) throws -> FluentTransaction {
        let id = ObjectIdentifier(driver)
        let (transaction, isNew) = try state.withLock { state in
            guard !state.isEnded else { throw ScopedError.scopeEnded(entry: FluentTransactionsKey.name) }
            if let found = state.transactions.first(where: { $0.driver == id }) { return (found.transaction, false) }
            let transaction = FluentTransaction(on: base.eventLoop, commitTimeout: driver.commitTimeout)
            state.transactions.append((id, transaction))
            return (transaction, true)
        }
        guard isNew else { return transaction }
        // Begun outside the lock: a pool with a free connection runs Fluent's closure at once.
        if let test {
            do {
                transaction.beginSavepoint(
                    in: try test.connection(to: driver, beginningWith: base),
                    on: base.eventLoop,
                    mode: mode
                )
            } catch {
                transaction.failToBegin(error)
            }
        } else {
            transaction.begin(on: base, mode: mode)
        }
        return transaction
    }

    /// Ends every transaction the scope began: commits them when `outcome` is a success,
    /// rolls them back otherwise; refuses later statements.
    ///
    /// - Throws: the first error of an end that failed (every transaction is ended).
    func end(_ outcome: ScopeOutcome) async throws {
        let transactions = state.withLock { state in
            state.isEnded = true
            return state.transactions.map(\.transaction)
        }
        var firstError: (any Error)?
        for transaction in transactions {
            do {
                try await transaction.end(outcome)
            } catch {
                firstError = firstError ?? error
            }
        }
        if let firstError { throw firstError }
    }
}

/// One transaction of a request scope, held open by Fluent's own `transaction(_:)` until the
/// scope ends.
final class FluentTransaction: Sendable {
    /// The transaction's connection, once `BEGIN` has run on it.
    private let ready: EventLoopPromise<any Database>
    /// Completed when the scope ends: succeeded to commit, failed to roll back.
    private let ending: EventLoopPromise<Void>
    private let commitTimeout: Duration
    private let state = Mutex(State())

    private struct State {
        /// The first error of a statement of the transaction.
        var failure: (any Error)?
        /// Fluent's `transaction(_:)`, once begun: it ends after the commit or rollback.
        var transaction: EventLoopFuture<Void>?
        /// Whether the lease and the `BEGIN` succeeded.
        var began = false
    }

    init(on eventLoop: any EventLoop, commitTimeout: Duration) {
        ready = eventLoop.makePromise()
        ending = eventLoop.makePromise()
        self.commitTimeout = commitTimeout
    }

    /// Leases a connection of `base` and begins the transaction on it, read-only on
    /// PostgreSQL when `mode` is read-only (and `REPEATABLE READ` for `.readOnlySnapshot`).
    func begin(on base: any Database, mode: TransactionMode) {
        let ready = ready
        let ending = ending
        let transaction = base.transaction { connection in
            self.state.withLock { $0.began = true }
            // Other SQL dialects have no read-only transaction to ask for.
            guard mode.isReadOnly, let sql = connection as? any SQLDatabase, sql.dialect.name == "postgresql" else {
                ready.succeed(connection)
                return ending.futureResult
            }
            let readOnly: SQLQueryString =
                mode == .readOnlySnapshot
                ? "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY" : "SET TRANSACTION READ ONLY"
            return sql.raw(readOnly).run()
                .flatMap {
                    ready.succeed(connection)
                    return ending.futureResult
                }
        }
        // A lease or a `BEGIN` that failed fails the statements waiting for the connection.
        transaction.whenFailure { ready.fail($0) }
        state.withLock { $0.transaction = transaction }
    }

    /// Begins the transaction as a savepoint of a test's transaction, on the test's connection,
    /// holding it from now to the scope's end.
    func beginSavepoint(in test: FluentTestConnection, on eventLoop: any EventLoop, mode: TransactionMode) {
        let ready = ready
        let ending = ending
        let transaction = test.withTurn(on: eventLoop) { connection in
            Savepoint.around(on: connection, mode: mode) {
                self.state.withLock { $0.began = true }
                ready.succeed(connection)
                return ending.futureResult
            }
        }
        transaction.whenFailure { ready.fail($0) }
        state.withLock { $0.transaction = transaction }
    }

    /// Fails the statements that wait for a transaction that could not begin.
    func failToBegin(_ error: any Error) {
        ready.fail(error)
    }

    /// The transaction's connection, once it has begun.
    var connection: EventLoopFuture<any Database> { ready.futureResult }

    /// Runs `statement` on the transaction's connection once it has begun; a statement that
    /// fails marks the transaction as not to be committed.
    func run<T: Sendable>(_ statement: @escaping @Sendable (any Database) -> EventLoopFuture<T>) -> EventLoopFuture<T> {
        ready.futureResult.flatMap { statement($0) }
            .flatMapErrorThrowing { error in
                self.state.withLock { $0.failure = $0.failure ?? error }
                throw error
            }
    }

    /// Commits when `outcome` is a success and no statement failed; rolls back otherwise.
    ///
    /// - Throws: the commit's error; ``FluentRollbackError`` when the scope succeeded but a
    ///   statement had failed; `DatabaseTimeoutError` when the commit or rollback did not
    ///   return within the commit timeout (the connection goes back once it has).
    func end(_ outcome: ScopeOutcome) async throws {
        let statementFailure = state.withLock { $0.failure }
        let commits = outcome.isSuccess && statementFailure == nil
        if commits { ending.succeed(()) } else { ending.fail(RollingBack()) }
        guard let transaction = state.withLock({ $0.transaction }) else { return }
        let ended = transaction.eventLoop.makePromise(of: Void.self)
        ended.completeWith(transaction)
        let timeout = commitTimeout
        let deadline = DeadlineWatchdog.shared.register(after: timeout) {
            ended.fail(DatabaseTimeoutError(operation: .finish, timeout: timeout, entry: FluentTransactionsKey.name))
        }
        defer { DeadlineWatchdog.shared.cancel(deadline) }
        do {
            try await ended.futureResult.get()
        } catch is RollingBack {
            // Rolled back, as asked.
        } catch let error where !state.withLock({ $0.began }) && !(error is DatabaseTimeoutError) {
            // The lease or the `BEGIN` failed: the statements waiting for it failed with this
            // error already, and a scope that ended well hears of it below.
        }
        if outcome.isSuccess, let statementFailure { throw FluentRollbackError(underlying: statementFailure) }
    }

    /// The error that makes Fluent's `transaction(_:)` roll back.
    private struct RollingBack: Error {}
}
