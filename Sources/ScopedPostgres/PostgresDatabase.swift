public import Logging
public import PostgresNIO

/// The application's PostgreSQL database: postgres-nio's client, reachable and migrated.
///
/// An app service (``PostgresDatabaseKey``) built at start-up by validation: it waits for the
/// first connection (at most the configuration's `connectTimeout`) and applies the pending
/// migrations under an advisory lock, so a server that cannot reach its database refuses to
/// start with a message naming the URL, its password redacted.
public struct PostgresDatabase: Sendable {
    /// The client sessions that may write lease their connections from, and migrations use.
    public let client: PostgresClient
    /// The client read-only sessions lease from, on connections that refuse writes; `nil` to
    /// run them on ``client``, each in a read-only transaction (`BEGIN READ ONLY`, one round
    /// trip more before and after).
    public let readClient: PostgresReadClient?
    /// How the database was reached.
    public let configuration: PostgresConfiguration
    /// Where statements and migrations are logged.
    public let logger: Logger
    /// The schema this database's sessions and migrations use (a tenant's); `nil` for the
    /// connections' default `search_path`.
    public let schema: PostgresSchema?
    /// Connections leased to sessions made with ``PostgresSession/init(database:mode:)``.
    let leases = PostgresLeaseCounter()

    /// Connects with `client` and migrates the database.
    ///
    /// - Parameters:
    ///   - client: the application's client; it must be running (see
    ///     `ScopeRoot.withRunningServices`, in ScopedServiceLifecycle).
    ///   - configuration: the database's configuration and migrations.
    ///   - logger: where migrations are logged.
    /// - Throws: ``PostgresStartupError`` when no connection could be made in time, or a
    ///   migration failed.
    public init(client: PostgresClient, configuration: PostgresConfiguration, logger: Logger) async throws {
        try await self.init(client: client, configuration: configuration, schema: nil, logger: logger)
    }

    /// Connects with `client` and migrates the database; read-only sessions lease from
    /// `readClient`.
    ///
    /// - Parameters:
    ///   - client: the application's client; it must be running.
    ///   - readClient: the client of read-only sessions (``PostgresReadClient``); it must be
    ///     running by the first read.
    ///   - configuration: the database's configuration and migrations.
    ///   - schema: the schema, or `nil` for the connections' default.
    ///   - logger: where migrations are logged.
    /// - Throws: ``PostgresStartupError`` when no connection could be made in time, or a
    ///   migration failed.
    public init(
        client: PostgresClient,
        readClient: PostgresReadClient,
        configuration: PostgresConfiguration,
        schema: PostgresSchema? = nil,
        logger: Logger
    ) async throws {
        try await self.init(
            client: client,
            optionalReadClient: readClient,
            configuration: configuration,
            schema: schema,
            logger: logger
        )
    }

    /// Connects with `client` and migrates `schema`, creating it if it does not exist: a
    /// tenant's database, sharing the application's client and its connections.
    ///
    /// Migrations of a schema run under an advisory lock of that schema's, so that instances
    /// opening the same tenant at once apply each migration once, and other tenants do not wait.
    ///
    /// - Parameters:
    ///   - client: the application's client; it must be running.
    ///   - configuration: the database's configuration and migrations.
    ///   - schema: the schema, or `nil` for the connections' default.
    ///   - logger: where migrations are logged.
    /// - Throws: ``PostgresStartupError`` when no connection could be made in time, or a
    ///   migration failed.
    public init(
        client: PostgresClient,
        configuration: PostgresConfiguration,
        schema: PostgresSchema?,
        logger: Logger
    ) async throws {
        try await self.init(
            client: client,
            optionalReadClient: nil,
            configuration: configuration,
            schema: schema,
            logger: logger
        )
    }

    private init(
        client: PostgresClient,
        optionalReadClient readClient: PostgresReadClient?,
        configuration: PostgresConfiguration,
        schema: PostgresSchema?,
        logger: Logger
    ) async throws {
        self.client = client
        self.readClient = readClient
        self.configuration = configuration
        self.schema = schema
        self.logger = logger
        let timeout = configuration.connectTimeout
        // The migration runs in a task of its own, so that start-up stops waiting for it at the
        // connect timeout (a deadline on the watchdog, as every other) even when a server that
        // never answers keeps it from noticing its cancellation.
        let migrated = HandOver<Void>()
        let migrating = Task {
            do {
                try await PostgresMigrator.migrate(client, configuration.migrations, in: schema, logger: logger)
                migrated.deliver(.success(()))
            } catch {
                migrated.deliver(.failure(error))
            }
        }
        do {
            try await withTaskCancellationHandler {
                try await migrated.value(within: timeout) {
                    PostgresStartupError(
                        url: configuration.redactedURL,
                        problem: "no connection within \(timeout) (is the server up, and the client running?)"
                    )
                }
            } onCancel: {
                migrated.deliver(.failure(CancellationError()))
            }
        } catch let error as PostgresStartupError {
            migrating.cancel()
            throw error
        } catch {
            migrating.cancel()
            throw PostgresStartupError(
                url: configuration.redactedURL,
                problem: "\(PostgresDatabaseError.classify(error))"
            )
        }
    }
}

extension PostgresDatabase {
    /// Connection counts, from ``PostgresDatabase/statistics()``.
    public struct Statistics: Sendable, Hashable, Codable {
        /// The most connections the client opens (``PostgresConfiguration/maximumConnections``).
        public var connections: Int
        /// Connections leased to a session right now.
        public var leased: Int
        /// Connections of the read client whose `search_path` is on a tenant's schema (or not
        /// known), out of those it has opened.
        public var readConnectionsOffDefaultPath: Int
        /// Read-only `COMMIT`s (`TransactionMode.readOnlySnapshot`) that failed after their
        /// scope had ended: logged, their connection closed; nothing written was lost.
        public var failedReadOnlyCommits: Int
    }

    /// A snapshot of the connections: how many the client may open and how many sessions
    /// hold right now.
    ///
    /// A session returns its connection after its commit or rollback, so once every scope has
    /// ended `leased` is 0: a session left holding one would show here. Meant for health and
    /// debug endpoints.
    ///
    /// - Returns: the counts.
    public func statistics() -> Statistics {
        Statistics(
            connections: configuration.maximumConnections,
            leased: leases.count,
            readConnectionsOffDefaultPath: readClient?.schemas.offDefaultCount ?? 0,
            failedReadOnlyCommits: readClient?.failedCommitCount ?? 0
        )
    }
}

/// The database could not be reached or migrated at start-up; the message names the URL with
/// its password redacted.
public struct PostgresStartupError: Error, Sendable, CustomStringConvertible {
    /// The database URL, password redacted.
    public var url: String
    /// What went wrong.
    public var problem: String

    /// A description for logs and error messages.
    public var description: String { "Cannot use the PostgreSQL database \(url): \(problem)" }
}
