public import Scoped
import ScopedDatabase

extension ScopedValues {
    /// How to open the application's database; set it on the application root.
    public var sqliteConfiguration: SQLiteConfiguration? {
        get { self[SQLiteConfigurationKey.self] }
        set { self[SQLiteConfigurationKey.self] = newValue }
    }

    /// The current scope's database: in a scope of a tenant, the tenant's
    /// (``SQLiteTenantDatabaseKey``); elsewhere the application's (``SQLiteDatabaseKey``).
    ///
    /// The application's is opened once per root from ``sqliteConfiguration``, on first use,
    /// and closed when the root shuts down. A tenant's is opened once per tenant from the
    /// tenant's ``sqliteConfiguration`` (which the root's `Tenancy` sets), and closed when the
    /// tenant is evicted. A tenant's scope never reaches the application's database, nor
    /// another tenant's.
    public var sqliteDatabase: SQLiteDatabase {
        get async throws {
            if tenant == nil { return try await service(SQLiteDatabaseKey.self) }
            return try await service(SQLiteTenantDatabaseKey.self)
        }
    }

    /// The current scope's database session, on ``sqliteDatabase``, begun as `transactionMode`
    /// says, committed when the scope ends well and rolled back otherwise.
    public var sqliteSession: SQLiteSession {
        get async throws { try await service(SQLiteSessionKey.self) }
    }
}

/// The application's ``SQLiteDatabase``, an app service built from `sqliteConfiguration`.
public enum SQLiteDatabaseKey: ScopedServiceKey {
    /// Which scope owns the service.
    public static let lifetime = ScopedLifetime.app
    /// The name diagnostics and errors use.
    public static var name: String { "sqliteDatabase" }

    /// Builds the service.
    ///
    /// - Throws: `DatabaseConfigurationError` when no `sqliteConfiguration` is set or a value in
    ///   it is invalid; what ``SQLiteDatabase/init(_:)`` throws.
    public static func makeValue() async throws -> SQLiteDatabase {
        // Only a test scope can hold a test's database; elsewhere it is not even read, so that
        // it is not among what a reload compares.
        let values = ScopedValues.current
        if values.isTestScope, let lent = values[SQLiteTestDatabaseKey.self] { return lent.database }
        return try await SQLiteDatabase.opening(configuredFor: name, in: values, fix: "on the application root")
    }

    /// Closes the service when its owning scope ends.
    public static func close(_ database: SQLiteDatabase, outcome: ScopeOutcome) async throws {
        guard database.closesWithItsRoot else { return }
        await database.close()
    }
}

/// A tenant's ``SQLiteDatabase``, a tenant service built from the tenant's
/// `sqliteConfiguration`: a file of the tenant's own, created and migrated on the tenant's
/// first use, and closed when the tenant is evicted.
///
/// Set each tenant's path in the root's `Tenancy`, from the tenant's ID (which is safe in a
/// file name):
///
/// ```swift
/// Tenancy(maximumOpen: 100) { tenant, values in
///     values.sqliteConfiguration?.path = "tenants/\(tenant).sqlite"
/// }
/// ```
///
/// In a test scope with a `.scoped(database: .sqlite(…))` database, each tenant gets a file of
/// its own beside the test's, with the test database's migrations, deleted when the test ends.
public enum SQLiteTenantDatabaseKey: ScopedServiceKey {
    /// Which scope owns the service.
    public static let lifetime = ScopedLifetime.tenant
    /// The name diagnostics and errors use.
    public static var name: String { "sqliteTenantDatabase" }

    /// Builds the service.
    ///
    /// - Throws: `DatabaseConfigurationError` when the tenant has no `sqliteConfiguration` or a
    ///   value in it is invalid; what ``SQLiteDatabase/init(_:)`` throws. The root hands either
    ///   to the tenant's scopes as a `TenantUnavailableError`.
    public static func makeValue() async throws -> SQLiteDatabase {
        let values = ScopedValues.current
        if values.isTestScope, let lent = values[SQLiteTestDatabaseKey.self], let tenant = values.tenant {
            return try await lent.tenantDatabase(for: tenant)
        }
        return try await SQLiteDatabase.opening(
            configuredFor: name,
            in: values,
            fix: "in the root's `Tenancy` configure closure"
        )
    }

    /// Closes the tenant's database when the tenant is evicted or its root shuts down.
    public static func close(_ database: SQLiteDatabase, outcome: ScopeOutcome) async throws {
        await database.close()
    }
}

extension SQLiteDatabase {
    /// The database `values.sqliteConfiguration` describes, for the service `entry`.
    ///
    /// - Throws: `DatabaseConfigurationError` naming `entry`, when the configuration is missing
    ///   or invalid (`fix` says where to correct it); what ``open(_:)`` throws.
    fileprivate static func opening(configuredFor entry: String, in values: ScopedValues, fix: String) async throws
        -> SQLiteDatabase
    {
        guard let configuration = values.sqliteConfiguration else {
            throw DatabaseConfigurationError.missing(entry: entry, configurationEntry: "sqliteConfiguration")
        }
        if let problem = configuration.problem {
            throw DatabaseConfigurationError(
                entry: entry,
                problem: problem,
                fix: "correct `$0.sqliteConfiguration` \(fix)"
            )
        }
        return try await open(configuration)
    }
}

/// The scope's ``SQLiteSession``, a per-scope resource finished when the scope ends.
public enum SQLiteSessionKey: ScopedServiceKey {
    /// Which scope owns the service.
    public static let lifetime = ScopedLifetime.scope
    /// The name diagnostics and errors use.
    public static var name: String { "sqliteSession" }

    /// Builds the service.
    public static func makeValue() async throws -> SQLiteSession {
        let values = ScopedValues.current
        // A test's database, set in its scope, wins over the root's even where the root's
        // `sqliteDatabase` was built before the test's scope existed. A tenant's is its own.
        let database: SQLiteDatabase
        if values.tenant == nil, values.isTestScope, let lent = values[SQLiteTestDatabaseKey.self] {
            database = lent.database
        } else {
            database = try await values.sqliteDatabase
        }
        return SQLiteSession(database: database, mode: values.transactionMode)
    }

    /// Closes the service when its owning scope ends.
    public static func close(_ session: SQLiteSession, outcome: ScopeOutcome) async throws {
        try await session.finish(outcome)
    }

    /// `true`: the close runs inline in the closing task, with no task or timer of its own.
    ///
    /// Finishing waits only for the statement in flight and the commit or rollback, each ended
    /// by ``SQLiteConfiguration/statementTimeout``, so the root's close timeout has nothing to
    /// add. A reader's close gives way once to the tasks waiting for a thread while a write is in
    /// flight, so that the write, which holds the one writer, is not kept waiting by reads.
    public static var closeBoundsItself: Bool { true }
}

/// The key of ``Scoped/ScopedValues/sqliteConfiguration``, written by hand so that this module
/// builds without the `@Entry` macro.
private struct SQLiteConfigurationKey: ScopedKey {
    static let defaultValue: SQLiteConfiguration? = nil
    static var name: String { "sqliteConfiguration" }
}
