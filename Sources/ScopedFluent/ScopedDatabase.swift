import FluentKit
import NIOCore
import SQLKit
import Logging
import Scoped
import ScopedDatabase

/// A Fluent database whose queries inside a request scope run in the scope's transaction, and
/// outside any on `base`.
struct ScopedDatabase: Database {
    let base: any Database
    let driver: ScopedDatabaseDriver

    var context: DatabaseContext { base.context }

    /// Inside a request scope, always: its queries run in the scope's transaction.
    var inTransaction: Bool { ScopedValues.current.isInLifetimeScope || base.inTransaction }

    func execute(query: DatabaseQuery, onOutput: @escaping @Sendable (any DatabaseOutput) -> Void)
        -> EventLoopFuture<Void>
    {
        routed { $0.execute(query: query, onOutput: onOutput) }
    }

    func execute(schema: DatabaseSchema) -> EventLoopFuture<Void> {
        routed { $0.execute(schema: schema) }
    }

    func execute(enum: DatabaseEnum) -> EventLoopFuture<Void> {
        routed { $0.execute(enum: `enum`) }
    }

    /// Inside a request scope, runs `closure` in the scope's transaction, which it joins;
    /// outside, in a transaction of its own on `base`.
    func transaction<T>(_ closure: @escaping @Sendable (any Database) -> EventLoopFuture<T>) -> EventLoopFuture<T> {
        guard ScopedValues.current.isInLifetimeScope else { return base.transaction(closure) }
        return closure(self)
    }

    /// Inside a request scope, runs `closure` on the scope's connection, in its transaction;
    /// outside, on a connection of `base`.
    func withConnection<T>(_ closure: @escaping @Sendable (any Database) -> EventLoopFuture<T>) -> EventLoopFuture<T> {
        guard ScopedValues.current.isInLifetimeScope else { return base.withConnection(closure) }
        return closure(self)
    }

    /// Runs `statement` on the current request scope's transaction, begun first if this is the
    /// scope's first statement; outside a request scope, on `base`.
    func routed<T: Sendable>(_ statement: @escaping @Sendable (any Database) -> EventLoopFuture<T>) -> EventLoopFuture<
        T
    > {
        let values = ScopedValues.current
        guard values.isInLifetimeScope else { return statement(base) }
        // Made without waiting, and found so by the scope's later statements: a statement
        // needs no task to find its transaction.
        let transactions: FluentTransactions
        do {
            guard
                let found = try values.scopeServiceWithoutWaiting(
                    FluentTransactionsKey.self,
                    makingWith: { FluentTransactions() }
                )
            else {
                // Only while another task builds it with `service(_:)`, which nothing here does.
                return base.eventLoop
                    .makeFutureWithTask {
                        try await values.service(FluentTransactionsKey.self)
                    }
                    .flatMap { transactions in
                        run(statement, in: transactions, mode: values.transactionMode)
                    }
            }
            transactions = found
        } catch {
            return base.eventLoop.makeFailedFuture(error)
        }
        return run(statement, in: transactions, mode: values.transactionMode)
    }

    private func run<T: Sendable>(
        _ statement: @escaping @Sendable (any Database) -> EventLoopFuture<T>,
        in transactions: FluentTransactions,
        mode: TransactionMode
    ) -> EventLoopFuture<T> {
        do {
            return try transactions.transaction(on: driver, beginningWith: base, mode: mode).run(statement)
        } catch {
            return base.eventLoop.makeFailedFuture(error)
        }
    }
}

/// A ``ScopedDatabase`` on a SQL driver: raw SQL through `request.db as? any SQLDatabase`
/// joins the request's transaction too.
struct ScopedSQLDatabase: Database, SQLDatabase {
    let scoped: ScopedDatabase
    let sql: any SQLDatabase

    init(_ scoped: ScopedDatabase, sql: any SQLDatabase) {
        self.scoped = scoped
        self.sql = sql
    }

    var context: DatabaseContext { scoped.context }
    var inTransaction: Bool { scoped.inTransaction }

    func execute(query: DatabaseQuery, onOutput: @escaping @Sendable (any DatabaseOutput) -> Void)
        -> EventLoopFuture<Void>
    {
        scoped.execute(query: query, onOutput: onOutput)
    }

    func execute(schema: DatabaseSchema) -> EventLoopFuture<Void> { scoped.execute(schema: schema) }

    func execute(enum: DatabaseEnum) -> EventLoopFuture<Void> { scoped.execute(enum: `enum`) }

    func transaction<T>(_ closure: @escaping @Sendable (any Database) -> EventLoopFuture<T>) -> EventLoopFuture<T> {
        guard ScopedValues.current.isInLifetimeScope else { return scoped.base.transaction(closure) }
        return closure(self)
    }

    func withConnection<T>(_ closure: @escaping @Sendable (any Database) -> EventLoopFuture<T>) -> EventLoopFuture<T> {
        guard ScopedValues.current.isInLifetimeScope else { return scoped.base.withConnection(closure) }
        return closure(self)
    }

    var logger: Logger { sql.logger }
    var eventLoop: any EventLoop { sql.eventLoop }
    var version: (any SQLDatabaseReportedVersion)? { sql.version }
    var dialect: any SQLDialect { sql.dialect }
    var queryLogLevel: Logger.Level? { sql.queryLogLevel }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void)
        -> EventLoopFuture<Void>
    {
        scoped.routed { database in
            guard let sql = database as? any SQLDatabase else {
                return database.eventLoop.makeFailedFuture(ScopedFluentError.notSQL)
            }
            return sql.execute(sql: query, onRow)
        }
    }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        try await execute(sql: query, onRow).get()
    }

    /// Runs `closure` with this database: inside a request scope every statement already goes
    /// to the scope's one connection.
    func withSession<R>(_ closure: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        guard ScopedValues.current.isInLifetimeScope else { return try await sql.withSession(closure) }
        return try await closure(self)
    }
}
