public import Logging
public import PostgresNIO
public import Scoped
import ScopedDatabase

extension ScopedValues {
    /// How to reach the application's PostgreSQL database; set it on the application root.
    public var postgresConfiguration: PostgresConfiguration? {
        get { self[PostgresConfigurationKey.self] }
        set { self[PostgresConfigurationKey.self] = newValue }
    }

    /// Where postgres-nio logs; by default nowhere.
    public var postgresLogger: Logger {
        get { self[PostgresLoggerKey.self] }
        set { self[PostgresLoggerKey.self] = newValue }
    }

    /// The current scope's database, its client reachable and its schema migrated.
    ///
    /// In a scope of a tenant, the tenant's schema (``PostgresTenantDatabaseKey``); elsewhere the
    /// application's (``PostgresDatabaseKey``).
    public var postgresDatabase: PostgresDatabase {
        get async throws {
            if tenant == nil { return try await service(PostgresDatabaseKey.self) }
            return try await service(PostgresTenantDatabaseKey.self)
        }
    }

    /// The current scope's session: one transaction, committed when the scope ends well and
    /// rolled back otherwise.
    public var postgresSession: PostgresSession {
        get async throws { try await service(PostgresSessionKey.self) }
    }
}

/// postgres-nio's `PostgresClient` for `ScopedValues/postgresConfiguration`: an app service.
///
/// The client is a swift-service-lifecycle `Service` that serves nothing until its `run()`
/// runs; `ScopeRoot.withRunningServices` (ScopedServiceLifecycle) runs it from the moment it is
/// built until after the root has shut down.
public enum PostgresClientKey: ScopedServiceKey {
    /// Which scope owns the service.
    public static let lifetime = ScopedLifetime.app
    /// The name diagnostics and errors use.
    public static var name: String { "postgresClient" }

    /// Builds the service.
    public static func makeValue() async throws -> PostgresClient {
        let values = ScopedValues.current
        let configuration = try values.postgresConfiguration(for: name)
        return PostgresClient(configuration: configuration.clientConfiguration, backgroundLogger: values.postgresLogger)
    }
}

/// The ``PostgresReadClient`` of read-only sessions for `ScopedValues/postgresConfiguration`:
/// an app service, run by the root as the application's client is.
public enum PostgresReadClientKey: ScopedServiceKey {
    /// Which scope owns the service.
    public static let lifetime = ScopedLifetime.app
    /// The name diagnostics and errors use.
    public static var name: String { "postgresReadClient" }

    /// Builds the service.
    public static func makeValue() async throws -> PostgresReadClient {
        let values = ScopedValues.current
        let configuration = try values.postgresConfiguration(for: name)
        return PostgresReadClient(configuration: configuration, backgroundLogger: values.postgresLogger)
    }
}

/// The application's ``PostgresDatabase``: an app service that reaches and migrates the database.
public enum PostgresDatabaseKey: ScopedServiceKey {
    /// Which scope owns the service.
    public static let lifetime = ScopedLifetime.app
    /// The name diagnostics and errors use.
    public static var name: String { "postgresDatabase" }

    /// Builds the service.
    ///
    /// - Throws: `DatabaseConfigurationError` when no `postgresConfiguration` is set; what
    ///   ``PostgresDatabase/init(client:configuration:logger:)`` throws.
    public static func makeValue() async throws -> PostgresDatabase {
        try await PostgresDatabase(configuredFor: name, schema: nil, in: .current)
    }
}

/// A tenant's ``PostgresDatabase``: a schema of the tenant's own (``PostgresSchema``, `t_<id>`)
/// on the application's database, created and migrated on the tenant's first use, reached
/// through the application's client.
///
/// Why a schema and not a database per tenant: a database per tenant needs a connection pool
/// per tenant, and a server with a thousand tenants would need a thousand pools' connections.
/// Schemas share the application's pools: a session that may write confines itself to its
/// tenant's schema with `SET LOCAL search_path`, which ends with its transaction; a read-only
/// session leases from the read client, whose connections keep the `search_path` they were
/// last set to, so a connection already on the tenant's schema costs no statement.
public enum PostgresTenantDatabaseKey: ScopedServiceKey {
    /// Which scope owns the service.
    public static let lifetime = ScopedLifetime.tenant
    /// The name diagnostics and errors use.
    public static var name: String { "postgresTenantDatabase" }

    /// Builds the service.
    ///
    /// - Throws: `DatabaseConfigurationError` when no `postgresConfiguration` is set, or the
    ///   tenant's ID is too long for a schema name; what
    ///   ``PostgresDatabase/init(client:configuration:schema:logger:)`` throws. The root hands
    ///   either to the tenant's scopes as a `TenantUnavailableError`.
    public static func makeValue() async throws -> PostgresDatabase {
        let values = ScopedValues.current
        guard let tenant = values.tenant else { throw ScopedError.outsideTenant(entry: name) }
        guard let schema = PostgresSchema(tenant: tenant) else {
            throw DatabaseConfigurationError(
                entry: name,
                problem: "tenant ID '\(tenant)' is longer than the 61 characters a schema name allows",
                fix: "use tenant IDs of at most 61 characters on PostgreSQL"
            )
        }
        return try await PostgresDatabase(configuredFor: name, schema: schema, in: values)
    }
}

extension PostgresDatabase {
    /// The database `values.postgresConfiguration` describes, on the application's client, in
    /// `schema`, for the service `entry`.
    ///
    /// - Throws: `DatabaseConfigurationError` naming `entry` when no configuration is set; what
    ///   ``init(client:configuration:schema:logger:)`` throws.
    fileprivate init(configuredFor entry: String, schema: PostgresSchema?, in values: ScopedValues) async throws {
        let configuration = try values.postgresConfiguration(for: entry)
        let client = try await values.service(PostgresClientKey.self)
        let readClient = try await values.service(PostgresReadClientKey.self)
        try await self.init(
            client: client,
            readClient: readClient,
            configuration: configuration,
            schema: schema,
            logger: values.postgresLogger
        )
    }
}

/// The scope's ``PostgresSession``, a per-scope resource finished when the scope ends.
public enum PostgresSessionKey: ScopedServiceKey {
    /// Which scope owns the service.
    public static let lifetime = ScopedLifetime.scope
    /// The name diagnostics and errors use.
    public static var name: String { "postgresSession" }

    /// Builds the service.
    public static func makeValue() async throws -> PostgresSession {
        let values = ScopedValues.current
        if let test = values[PostgresTestTransactionKey.self] {
            return PostgresSession(test: test, tenant: values.tenant, mode: values.transactionMode)
        }
        let database = try await values.postgresDatabase
        return PostgresSession(database: database, mode: values.transactionMode)
    }

    /// Closes the service when its owning scope ends: commits or rolls back, and returns the
    /// connection.
    public static func close(_ session: PostgresSession, outcome: ScopeOutcome) async throws {
        try await session.finish(outcome)
    }

    /// `true`: finishing waits only for the statement in flight, the commit or rollback and the
    /// connection's return, each under a deadline of its own, so the scope closes it inline.
    public static var closeBoundsItself: Bool { true }
}

extension ScopedValues {
    /// The configuration the service `entry` is built from.
    ///
    /// - Throws: `DatabaseConfigurationError` naming `entry` when no `postgresConfiguration` is set.
    fileprivate func postgresConfiguration(for entry: String) throws -> PostgresConfiguration {
        guard let configuration = postgresConfiguration else {
            throw DatabaseConfigurationError.missing(entry: entry, configurationEntry: "postgresConfiguration")
        }
        return configuration
    }
}

// The keys of this module's entries, written by hand so that it builds without the `@Entry`
// macro.

private struct PostgresConfigurationKey: ScopedKey {
    static let defaultValue: PostgresConfiguration? = nil
}

private struct PostgresLoggerKey: ScopedKey {
    static let defaultValue = Logger(label: "scoped.postgres", factory: { _ in SwiftLogNoOpLogHandler() })
}
