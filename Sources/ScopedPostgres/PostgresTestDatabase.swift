public import Logging
import PostgresNIO
import Synchronization
public import Scoped
public import ScopedDatabase

/// A PostgreSQL database shared by tests, each test inside a transaction of its own that is
/// rolled back when it ends, for ScopedTesting's `.scoped(database:)` trait.
///
/// ```swift
/// @Test(.scoped(database: .postgres(configuration)))
/// func ratingAMovieStoresIt() async throws { … }
/// ```
///
/// `configuration` is a ``PostgresConfiguration`` made beforehand, in a `static let` say: a
/// trait's arguments cannot throw.
///
/// Before the test, the database is migrated, one connection is leased for the test and a
/// transaction begun on it. Every `postgresSession` of the test then runs on that connection,
/// in a savepoint of the test's transaction: released when its scope ends well, rolled back to
/// otherwise, so a request's commit and rollback behave as in production. The sessions of one
/// test take turns on the connection, for at most the configuration's `leaseTimeout` each. When
/// the test ends, its transaction is rolled back: tests run in parallel on one database, see no
/// one else's rows, and clean up nothing.
///
/// Two tests that write the same unique key in parallel both pass: PostgreSQL makes the second
/// insert wait until the first test's transaction is rolled back. A `.readOnly` session runs
/// with `transaction_read_only` set in its savepoint, so its writes fail as they would in
/// production; its snapshot is the test transaction's, not one of its own.
///
/// Each tenant of a test (`.scoped(tenant:)`, or a scope of a tenant the test opens) has a
/// schema of its own, as it would in production: made and migrated in the test's transaction
/// by the tenant's first session, and gone with it.
public struct PostgresTestDatabase: TestDatabase {
    /// The database, its migrations and its deadlines.
    public var configuration: PostgresConfiguration
    /// Where postgres-nio logs.
    public var logger: Logger

    /// A test database on the database `configuration` names.
    public init(configuration: PostgresConfiguration, logger: Logger = Logger(label: "scoped.postgres.test")) {
        self.configuration = configuration
        self.logger = logger
    }

    /// Migrates the database, leases the test's connection and begins its transaction, runs
    /// `body`, then rolls the transaction back and returns the connection.
    public func withIsolation<R: Sendable>(
        for test: String,
        _ body: (_ isolate: @escaping @Sendable (inout ScopedValues) -> Void) async throws -> R
    ) async throws -> R {
        var clientConfiguration = configuration.clientConfiguration
        clientConfiguration.options.maximumConnections = 1
        let client = PostgresClient(configuration: clientConfiguration, backgroundLogger: logger)
        let configuration = configuration
        let logger = logger
        return try await withThrowingTaskGroup(of: R?.self) { group in
            group.addTask {
                await client.run()
                return nil
            }
            defer { group.cancelAll() }
            _ = try await PostgresDatabase(client: client, configuration: configuration, logger: logger)
            return try await client.withConnection { connection in
                try await connection.query("BEGIN", logger: logger)
                let transaction = PostgresTestTransaction(connection: connection, configuration: configuration)
                let result: Result<R, any Error>
                do {
                    result = .success(try await body { $0[PostgresTestTransactionKey.self] = transaction })
                } catch {
                    result = .failure(error)
                }
                // Waits for the test's sessions still running, then undoes everything they did.
                // A session kept past the test (reported as work left running) holds the end for
                // at most a statement's time.
                _ = try? await DeadlineWatchdog.shared.run(
                    { await transaction.close() },
                    abandoningAfter: configuration.statementTimeout
                ) { CancellationError() }
                if !connection.isClosed { try await connection.query("ROLLBACK", logger: logger) }
                return try result.get()
            }
        }
    }
}

extension TestDatabase where Self == PostgresTestDatabase {
    /// The database `configuration` names, each test in a transaction rolled back when it ends.
    public static func postgres(_ configuration: PostgresConfiguration) -> PostgresTestDatabase {
        PostgresTestDatabase(configuration: configuration)
    }
}

/// A test's connection and open transaction, which the test's sessions take turns on.
final class PostgresTestTransaction: Sendable {
    let connection: PostgresConnection
    let configuration: PostgresConfiguration
    /// One session of the test at a time holds the connection, from its first statement to its end.
    let turn: AsyncPool<Int>

    /// The schemas of the test's tenants, each made in the test's transaction by the tenant's
    /// first session, so that it goes when the transaction is rolled back.
    private let tenantSchemas = Mutex<[TenantID: PostgresSchema]>([:])

    init(connection: PostgresConnection, configuration: PostgresConfiguration) {
        self.connection = connection
        self.configuration = configuration
        self.turn = AsyncPool([0]) { ScopedError.scopeEnded(entry: PostgresSessionKey.name) }
    }

    /// What a session of `tenant` (or of none, for `nil`) sets first in its savepoint: the
    /// tenant's schema, made and migrated now if this is its first session; the default search
    /// path for a session of no tenant once the test has tenants; `nil` while it has none.
    ///
    /// Call it only while holding the connection's turn: one session at a time makes schemas.
    ///
    /// - Throws: a database error or ``PostgresMigrationError``; then the schema is not made,
    ///   and the tenant's next session tries again.
    func searchPath(for tenant: TenantID?, logger: Logger) async throws -> PostgresQuery? {
        guard let tenant else {
            return tenantSchemas.withLock(\.isEmpty) ? nil : "SET LOCAL search_path TO DEFAULT"
        }
        if let schema = tenantSchemas.withLock({ $0[tenant] }) { return schema.setLocalSearchPath }
        let schema = PostgresSchema.testSchema()
        do {
            _ = try await connection.query("SAVEPOINT scoped_tenant_schema", logger: logger).collect()
            _ = try await connection.query(PostgresQuery(unsafeSQL: "CREATE SCHEMA \(schema)"), logger: logger)
                .collect()
            _ = try await connection.query(schema.setLocalSearchPath, logger: logger).collect()
            _ = try await PostgresMigrator.apply(
                configuration.migrations,
                on: connection,
                inTransaction: true,
                logger: logger
            )
            _ = try await connection.query("SET LOCAL search_path TO DEFAULT", logger: logger).collect()
            _ = try await connection.query("RELEASE SAVEPOINT scoped_tenant_schema", logger: logger).collect()
        } catch {
            _ = try? await connection.query("ROLLBACK TO SAVEPOINT scoped_tenant_schema", logger: logger).collect()
            throw PostgresDatabaseError.classify(error)
        }
        tenantSchemas.withLock { $0[tenant] = schema }
        return schema.setLocalSearchPath
    }

    /// Refuses later sessions, once the one holding the connection has ended.
    func close() async {
        _ = await turn.close()
    }
}

/// The transaction a test lent to its scopes' sessions; unset outside `.scoped(database:)`.
enum PostgresTestTransactionKey: ScopedKey {
    static var defaultValue: PostgresTestTransaction? { nil }
}
