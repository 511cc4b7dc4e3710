public import Scoped

extension ScopedValues {
    /// How to open the application's database; set it on the application root.
    @Entry public var sqliteConfiguration: SQLiteConfiguration? = nil

    /// How the scope's ``SQLiteSession`` begins its transaction; set it where a scope opens
    /// (``SQLiteTransactionMode/immediate`` for a request that writes).
    @Entry public var sqliteTransactionMode: SQLiteTransactionMode = .deferred

    /// The application's database: opened once per root from ``sqliteConfiguration``, on first
    /// use, and closed when the root shuts down.
    public var database: SQLiteDatabase {
        get async throws { try await self[SQLiteDatabaseKey.self] }
    }

    /// The current scope's database session, committed when the scope ends well and rolled
    /// back otherwise; one transaction unless ``sqliteTransactionMode`` is deferred and it
    /// reads before it writes.
    public var sqliteSession: SQLiteSession {
        get async throws { try await self[SQLiteSessionKey.self] }
    }
}

/// The application's ``SQLiteDatabase``, an app service built from `sqliteConfiguration`.
public enum SQLiteDatabaseKey: ScopedServiceKey {
    /// Which scope owns the service.
    public static let lifetime = ScopedLifetime.app
    /// The name diagnostics and errors use.
    public static var name: String { "database" }

    /// Builds the service.
    public static func makeValue() async throws -> SQLiteDatabase {
        guard let configuration = ScopedValues.current.sqliteConfiguration else {
            throw SQLiteError(
                code: .misuse,
                resultCode: 21,
                message: "No database configured: set `$0.sqliteConfiguration` on the application root",
                sql: nil
            )
        }
        return try SQLiteDatabase(configuration)
    }

    /// Closes the service when its owning scope ends.
    public static func close(_ database: SQLiteDatabase, outcome: ScopeOutcome) async throws {
        await database.close()
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
        return SQLiteSession(database: try await values.database, mode: values.sqliteTransactionMode)
    }

    /// Closes the service when its owning scope ends.
    public static func close(_ session: SQLiteSession, outcome: ScopeOutcome) async throws {
        try await session.finish(outcome)
    }
}
