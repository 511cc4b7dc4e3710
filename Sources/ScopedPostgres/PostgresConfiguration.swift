import Foundation
import NIOSSL
public import PostgresNIO

/// How to reach the application's PostgreSQL database, and what to migrate it with.
///
/// Build it from a URL, as configuration gives one:
///
/// ```swift
/// let configuration = try PostgresConfiguration(
///     url: "postgres://catalog:secret@db.internal:5432/catalog",
///     migrations: CatalogMigrations.all
/// )
/// ```
///
/// Its ``description`` and ``redactedURL`` never show the password, so the configuration can
/// be logged, reported in an error and shown by diagnostics.
public struct PostgresConfiguration: Sendable, Hashable, CustomStringConvertible {
    /// The server's host name or address.
    public var host: String
    /// The server's port.
    public var port: Int
    /// The role to connect as.
    public var username: String
    /// The role's password, if the server asks for one.
    public var password: String?
    /// The database to connect to.
    public var database: String
    /// Whether to speak TLS: `false` for `sslmode=disable`, else TLS when the server offers it.
    public var usesTLS: Bool
    /// The most connections the application's client opens; requests beyond wait for one.
    public var maximumConnections: Int
    /// The most connections the read client (``PostgresReadClient``) opens for read-only
    /// sessions, beside ``maximumConnections``; `nil` (the default) for as many.
    ///
    /// The server sees up to the sum of the two from each instance.
    public var maximumReadConnections: Int?
    /// How long start-up waits for the first connection before it gives up.
    public var connectTimeout: Duration
    /// The schema's migrations, applied in `version` order at start-up (see ``PostgresMigration``).
    public var migrations: [PostgresMigration]
    /// How long a session waits for a connection from the client's pool before it fails with
    /// `DatabaseTimeoutError`; it holds when the server cannot be reached at all.
    ///
    /// Default 5 seconds.
    public var leaseTimeout: Duration = .seconds(5)
    /// How long a statement, a commit or a rollback may run.
    ///
    /// Past it, its connection is closed and it fails with `DatabaseTimeoutError`, whether or not
    /// the server answers. The server is also asked to cancel statements a little later
    /// (`statement_timeout`). Default 10 seconds.
    public var statementTimeout: Duration = .seconds(10)

    /// A configuration from its parts.
    ///
    /// - Parameters:
    ///   - host: the server's host name or address.
    ///   - port: the server's port.
    ///   - username: the role to connect as.
    ///   - password: the role's password, if any.
    ///   - database: the database to connect to.
    ///   - usesTLS: whether to speak TLS when the server offers it.
    ///   - maximumConnections: the most connections the client opens.
    ///   - connectTimeout: how long start-up waits for the first connection.
    ///   - migrations: the schema's migrations.
    public init(
        host: String,
        port: Int = 5432,
        username: String,
        password: String? = nil,
        database: String,
        usesTLS: Bool = false,
        maximumConnections: Int = 20,
        connectTimeout: Duration = .seconds(10),
        migrations: [PostgresMigration] = []
    ) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
        self.usesTLS = usesTLS
        self.maximumConnections = maximumConnections
        self.connectTimeout = connectTimeout
        self.migrations = migrations
    }

    /// A configuration from a URL: `postgres://user:password@host:port/database`, with an
    /// optional `?sslmode=disable|prefer` (disable by default).
    ///
    /// - Parameters:
    ///   - url: the database URL; `postgresql://` is accepted too.
    ///   - maximumConnections: the most connections the client opens.
    ///   - migrations: the schema's migrations.
    /// - Throws: ``PostgresConfigurationError`` naming what is wrong with the URL; its message
    ///   shows the URL with the password redacted.
    public init(url: String, maximumConnections: Int = 20, migrations: [PostgresMigration] = []) throws {
        let redacted = Self.redact(url)
        guard let components = URLComponents(string: url), let scheme = components.scheme,
            ["postgres", "postgresql"].contains(scheme)
        else {
            throw PostgresConfigurationError(
                url: redacted,
                problem: "expected postgres://user:password@host:port/database"
            )
        }
        guard let host = components.host, !host.isEmpty else {
            throw PostgresConfigurationError(url: redacted, problem: "the host is missing")
        }
        guard let username = components.user, !username.isEmpty else {
            throw PostgresConfigurationError(url: redacted, problem: "the user name is missing")
        }
        let database = String(components.path.drop { $0 == "/" })
        guard !database.isEmpty else {
            throw PostgresConfigurationError(url: redacted, problem: "the database name is missing")
        }
        let sslMode = components.queryItems?.first { $0.name == "sslmode" }?.value ?? "disable"
        guard ["disable", "prefer"].contains(sslMode) else {
            throw PostgresConfigurationError(url: redacted, problem: "sslmode must be disable or prefer")
        }
        self.init(
            host: host,
            port: components.port ?? 5432,
            username: username.removingPercentEncoding ?? username,
            password: components.password.map { $0.removingPercentEncoding ?? $0 },
            database: database,
            usesTLS: sslMode == "prefer",
            maximumConnections: maximumConnections,
            migrations: migrations
        )
    }

    /// The database's URL with the password replaced by `***`.
    public var redactedURL: String {
        "postgres://\(username)\(password == nil ? "" : ":***")@\(host):\(port)/\(database)"
    }

    /// The database's URL with the password redacted.
    public var description: String { redactedURL }

    /// The configuration postgres-nio's client is created with: for code that makes its own
    /// `PostgresClient`, outside a root.
    public var clientConfiguration: PostgresClient.Configuration {
        var configuration = PostgresClient.Configuration(
            host: host,
            port: port,
            username: username,
            password: password,
            database: database,
            tls: usesTLS ? .prefer(.makeClientConfiguration()) : .disable
        )
        configuration.options.maximumConnections = maximumConnections
        configuration.options.connectTimeout = connectTimeout
        // The server's own deadline, just after the client's: a statement the client gave up
        // on does not go on holding locks on a server that still answers.
        let serverTimeout = statementTimeout + .seconds(1)
        let milliseconds =
            serverTimeout.components.seconds * 1000 + serverTimeout.components.attoseconds / 1_000_000_000_000_000
        configuration.options.additionalStartupParameters.append(("statement_timeout", "\(milliseconds)"))
        return configuration
    }

    /// The configuration of the read client's connections: ``clientConfiguration`` with
    /// ``maximumReadConnections``, and every transaction on them read-only
    /// (`default_transaction_read_only`), so that PostgreSQL itself refuses a write made
    /// through a read-only session, inside a transaction or not.
    public var readClientConfiguration: PostgresClient.Configuration {
        var configuration = clientConfiguration
        configuration.options.maximumConnections = maximumReadConnections ?? maximumConnections
        configuration.options.additionalStartupParameters.append(("default_transaction_read_only", "on"))
        return configuration
    }

    /// The configuration of one connection of its own, outside the client's pool: a listening
    /// connection, which a pool would hand to other work between notifications.
    ///
    /// - Throws: NIOSSL's error when a TLS context cannot be made.
    func connectionConfiguration() throws -> PostgresConnection.Configuration {
        var configuration = PostgresConnection.Configuration(
            host: host,
            port: port,
            username: username,
            password: password,
            database: database,
            tls: usesTLS ? .prefer(try NIOSSLContext(configuration: .makeClientConfiguration())) : .disable
        )
        configuration.options.connectTimeout = .nanoseconds(
            connectTimeout.components.seconds * 1_000_000_000 + connectTimeout.components.attoseconds / 1_000_000_000
        )
        return configuration
    }

    /// `url` with whatever stands between `://user:` and `@` replaced by `***`.
    static func redact(_ url: String) -> String {
        guard let schemeEnd = url.range(of: "://"), let at = url[schemeEnd.upperBound...].lastIndex(of: "@"),
            let colon = url[schemeEnd.upperBound..<at].firstIndex(of: ":")
        else { return url }
        return url[..<url.index(after: colon)] + "***" + url[at...]
    }
}
