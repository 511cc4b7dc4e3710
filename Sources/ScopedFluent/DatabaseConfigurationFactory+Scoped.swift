public import FluentKit
import Scoped
import SQLKit
import Synchronization

extension DatabaseConfigurationFactory {
    /// The database `base` configures, with every query made inside a request scope joining
    /// that scope's one transaction.
    ///
    /// Register it where the application registers its database, and keep using `request.db`
    /// and `app.db` as before:
    ///
    /// ```swift
    /// func configureTodos(_ app: Application, root: ScopeRoot, configuration: SQLPostgresConfiguration) {
    ///     app.databases.use(.scoped(.postgres(configuration: configuration)), as: .psql)
    ///     app.middleware.use(RequestScopeMiddleware(root: root))
    ///     app.post("todos") { request async throws -> Todo in
    ///         let todo = try request.content.decode(Todo.self)
    ///         try await todo.save(on: request.db)  // In the request's transaction.
    ///         return todo
    ///     }
    /// }
    /// ```
    ///
    /// A request's first query leases a connection and begins a transaction on it with
    /// Fluent's own `transaction(_:)`; every later query of the request, from any of its child
    /// tasks, runs on that connection, in that transaction. The scope's end ends it, before the
    /// response is sent:
    /// - `ScopeOutcome.success`: commits. A commit that fails, or that does not return within
    ///   `commitTimeout`, fails the request; so does a query of the request that failed (the
    ///   transaction is then rolled back, not committed, even when the handler caught the
    ///   error: PostgreSQL would have refused the rest of it anyway).
    /// - `ScopeOutcome.failure(_:)` and `ScopeOutcome.cancelled`: rolls back.
    ///
    /// A query made after its scope ended fails with `ScopedError.scopeEnded(entry:)`; one made
    /// outside any request scope (migrations at boot, a command) runs on `base` as it would
    /// without this wrapper, each statement on its own. Inside a request scope,
    /// `transaction(_:)` joins the request's transaction, as Fluent's drivers join one already
    /// open: what its closure does commits or rolls back with the request. A request that makes
    /// no query leases nothing. A scope whose `transactionMode` is `.readOnly` gets a read-only
    /// transaction on PostgreSQL.
    ///
    /// - Parameters:
    ///   - base: the database to wrap, such as `.postgres(configuration:)` or `.sqlite(_:)`.
    ///   - commitTimeout: how long a request's commit or rollback may take before the request
    ///     stops waiting for it and fails.
    /// - Returns: the factory of the wrapped configuration, for `app.databases.use(_:as:)`.
    public static func scoped(
        _ base: DatabaseConfigurationFactory,
        commitTimeout: Duration = .seconds(5)
    ) -> DatabaseConfigurationFactory {
        DatabaseConfigurationFactory {
            ScopedDatabaseConfiguration(base: base.make(), commitTimeout: commitTimeout)
        }
    }
}

/// The configuration `DatabaseConfigurationFactory.scoped(_:commitTimeout:)` makes: `base`'s,
/// with a driver that routes a request scope's queries to its transaction.
struct ScopedDatabaseConfiguration: DatabaseConfiguration {
    var base: any DatabaseConfiguration
    let commitTimeout: Duration

    var middleware: [any AnyModelMiddleware] {
        get { base.middleware }
        set { base.middleware = newValue }
    }

    func makeDriver(for databases: Databases) -> any DatabaseDriver {
        ScopedDatabaseDriver(
            base: base.makeDriver(for: databases),
            commitTimeout: commitTimeout,
            test: ScopedValues.current[FluentTestTransactionKey.self]
        )
    }
}

/// A driver that makes `base`'s databases, each wrapped so that its queries in a request scope
/// go to the scope's transaction.
final class ScopedDatabaseDriver: DatabaseDriver {
    let base: any DatabaseDriver
    let commitTimeout: Duration
    /// The connections tests leased through this driver's databases, rolled back before the
    /// driver shuts down if their tests have not ended yet.
    private let testConnections = Mutex<[FluentTestConnection]>([])

    /// The test that made this driver (its application's first database, in the test's body),
    /// under `.scoped(database: .fluent)`: where queries that carry no scope of their own go.
    let test: FluentTestTransaction?

    init(base: any DatabaseDriver, commitTimeout: Duration, test: FluentTestTransaction?) {
        self.base = base
        self.commitTimeout = commitTimeout
        self.test = test
    }

    func makeDatabase(with context: DatabaseContext) -> any Database {
        let database = base.makeDatabase(with: context)
        // SQL drivers' databases are `SQLDatabase`s too, and applications cast `request.db` to
        // one for raw SQL: the wrapper keeps that.
        if let sql = database as? any SQLDatabase {
            return ScopedSQLDatabase(ScopedDatabase(base: database, driver: self), sql: sql)
        }
        return ScopedDatabase(base: database, driver: self)
    }

    /// Keeps `connection` for ``shutdownAsync()`` to roll back.
    func adopt(_ connection: FluentTestConnection) {
        testConnections.withLock { connections in
            connections.removeAll(where: \.hasRolledBack)
            connections.append(connection)
        }
    }

    /// Shuts `base` down; a test's transaction still open on it is rolled back when its test
    /// ends, on the connection the pool no longer holds.
    func shutdown() { base.shutdown() }

    /// Rolls back the transactions of tests still running on this driver, then shuts `base`
    /// down.
    func shutdownAsync() async {
        for connection in testConnections.withLock({ $0 }) { await connection.rollBack() }
        await base.shutdownAsync()
    }
}
