public import Scoped
import ScopedDatabase

extension ScopedValues {
    /// How to open the application's database; set it on the application root.
    public var sqliteConfiguration: SQLiteConfiguration? {
        get { self[SQLiteConfigurationKey.self] }
        set { self[SQLiteConfigurationKey.self] = newValue }
    }

    /// The application's database: opened once per root from ``sqliteConfiguration``, on first
    /// use, and closed when the root shuts down.
    public var sqliteDatabase: SQLiteDatabase {
        get async throws { try await self[SQLiteDatabaseKey.self] }
    }

    /// The current scope's database session, begun as `transactionMode` says, committed when
    /// the scope ends well and rolled back otherwise.
    public var sqliteSession: SQLiteSession {
        get async throws { try await self[SQLiteSessionKey.self] }
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
        if values.isInTestScope, let lent = values[SQLiteTestDatabaseKey.self] { return lent }
        guard let configuration = values.sqliteConfiguration else {
            throw DatabaseConfigurationError.missing(entry: name, configurationEntry: "sqliteConfiguration")
        }
        if let problem = configuration.problem {
            throw DatabaseConfigurationError(
                entry: name,
                problem: problem,
                fix: "correct `$0.sqliteConfiguration` on the application root"
            )
        }
        return try SQLiteDatabase(configuration)
    }

    /// Closes the service when its owning scope ends.
    public static func close(_ database: SQLiteDatabase, outcome: ScopeOutcome) async throws {
        guard database.closesWithItsRoot else { return }
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
        // A test's database, set in its scope, wins over the root's even where the root's
        // `sqliteDatabase` was built before the test's scope existed.
        let database: SQLiteDatabase
        if values.isInTestScope, let lent = values[SQLiteTestDatabaseKey.self] {
            database = lent
        } else {
            database = try await values.sqliteDatabase
        }
        return SQLiteSession(database: database, mode: values.transactionMode)
    }

    /// Closes the service when its owning scope ends.
    public static func close(_ session: SQLiteSession, outcome: ScopeOutcome) async throws {
        try await session.finish(outcome)
    }

    /// `false`, for now: the close runs under the root's close timeout in a task of its own.
    ///
    /// Finishing waits only for the statement in flight and the commit or rollback, each ended
    /// by the statement timeout, so it could close inline, as the PostgreSQL session does.
    /// Inline, read requests end with fewer suspensions and take more of the cooperative
    /// threads, and each write, which holds the one writer across its waits for a thread,
    /// slowed about fourfold under the reliability suite's `reload` load (32 readers beside 32
    /// writers): 20–25 of about 240 writes ran past their lease timeout, where the
    /// task-per-close code answers every one of about 1,300. So the session keeps the task.
    public static var closeBoundsItself: Bool { false }
}

/// The key of ``Scoped/ScopedValues/sqliteConfiguration``, written by hand so that this module
/// builds without the `@Entry` macro.
private struct SQLiteConfigurationKey: ScopedKey {
    static let defaultValue: SQLiteConfiguration? = nil
    static var name: String { "sqliteConfiguration" }
}
