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
    /// The values of the task that asked Fluent for this database (`request.db` in a handler):
    /// what its queries belong to when they are made where no scope is current, as Fluent
    /// makes some in a future's callback on an event loop (eager loading, a model's middleware).
    let madeIn: ScopedValues

    init(base: any Database, driver: ScopedDatabaseDriver) {
        self.base = base
        self.driver = driver
        self.madeIn = ScopedValues.current
    }

    var context: DatabaseContext { base.context }

    /// Where a query made now goes.
    enum Route {
        /// The request scope's transaction.
        case scope(ScopedValues)
        /// A savepoint of its own in the test's transaction, under `.scoped(database: .fluent)`.
        case test(FluentTestTransaction)
        /// `base`, on its own.
        case base
    }

    /// Where a query made now goes: the current scope's values, or where this database was
    /// made when no scope is current; outside a request scope, the test the values or this
    /// driver belong to.
    var route: Route {
        let current = ScopedValues.current
        let values = current.isInScope ? current : madeIn
        if values.isInRequestScope { return .scope(values) }
        if let test = test(of: values) { return .test(test) }
        return .base
    }

    /// The test `values` run in under `.scoped(database: .fluent)`, or else the test this
    /// database's driver was made in: a request scope opened on a root built outside the test
    /// (a suite's) does not carry the test's values, and its transaction still belongs to the
    /// test whose application it serves.
    func test(of values: ScopedValues) -> FluentTestTransaction? {
        values[FluentTestTransactionKey.self] ?? driver.test
    }

    /// Inside a request scope, always: its queries run in the scope's transaction; and so in a
    /// test under `.scoped(database: .fluent)`.
    var inTransaction: Bool {
        if case .base = route { return base.inTransaction }
        return true
    }

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
        outsideRequestScope(closure) ?? base.transaction(closure)
    }

    /// Inside a request scope, runs `closure` on the scope's connection, in its transaction;
    /// outside, on a connection of `base`.
    func withConnection<T>(_ closure: @escaping @Sendable (any Database) -> EventLoopFuture<T>) -> EventLoopFuture<T> {
        outsideRequestScope(closure) ?? base.withConnection(closure)
    }

    /// What `transaction(_:)` and `withConnection(_:)` run other than on `base`:
    /// `closure(self)` in a request scope, whose statements go to its transaction, and in a
    /// test under `.scoped(database: .fluent)`, whose statements each run in a savepoint of
    /// their own on the test's connection (`T` need not be `Sendable`, so `closure`'s future
    /// cannot wait for a turn); `nil` when `closure` should run on `base`.
    func outsideRequestScope<T>(
        _ closure: @escaping @Sendable (any Database) -> EventLoopFuture<T>
    ) -> EventLoopFuture<T>? {
        if case .base = route { return nil }
        return closure(self)
    }

    /// Runs `statement` on the current request scope's transaction, begun first if this is the
    /// scope's first statement; outside a request scope, on `base`.
    func routed<T: Sendable>(_ statement: @escaping @Sendable (any Database) -> EventLoopFuture<T>) -> EventLoopFuture<
        T
    > {
        let values: ScopedValues
        switch route {
        case .scope(let scope):
            values = scope
        case .test(let test):
            do {
                return try test.connection(to: driver, beginningWith: base).runOnItsOwn(on: base.eventLoop, statement)
            } catch {
                return base.eventLoop.makeFailedFuture(error)
            }
        case .base:
            return statement(base)
        }
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
                        run(statement, in: transactions, values: values)
                    }
            }
            transactions = found
        } catch {
            return base.eventLoop.makeFailedFuture(error)
        }
        return run(statement, in: transactions, values: values)
    }

    private func run<T: Sendable>(
        _ statement: @escaping @Sendable (any Database) -> EventLoopFuture<T>,
        in transactions: FluentTransactions,
        values: ScopedValues
    ) -> EventLoopFuture<T> {
        do {
            return
                try transactions.transaction(
                    on: driver,
                    beginningWith: base,
                    mode: values.transactionMode,
                    test: test(of: values)
                )
                .run(statement)
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
        if case .base = scoped.route { return scoped.base.transaction(closure) }
        return closure(self)
    }

    func withConnection<T>(_ closure: @escaping @Sendable (any Database) -> EventLoopFuture<T>) -> EventLoopFuture<T> {
        if case .base = scoped.route { return scoped.base.withConnection(closure) }
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
        if case .base = scoped.route { return try await sql.withSession(closure) }
        return try await closure(self)
    }
}

extension ScopedValues {
    /// Whether queries made now belong to a request scope's transaction: inside a scope that
    /// owns scope services, other than a test's own scope (whose body is not a request).
    var isInRequestScope: Bool { isInScope && !isOnTestsOwnRoot }
}
