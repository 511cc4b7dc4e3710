import MovieCatalog
import Configuration
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
package import Logging
import NIOCore
import Scoped
import ScopedDiagnostics
import ScopedPostgres
import ScopedSQLite
import SystemPackage

/// The example server's settings: a profile file from `Config/`, with environment variables
/// over it (`HTTP_PORT` overrides `http.port`).
package struct AppConfiguration: Sendable {
    enum Profile: String, Sendable, CaseIterable {
        /// `multitenant`: the development profile with tenancy on.
        case development, production, test, multitenant
    }

    /// The database the catalog is kept in.
    enum DatabaseKind: String, Sendable {
        case sqlite, postgres

        /// The `movieRepository` variant `catalog.repository` names on this database, at the root
        /// and in a tenant's settings alike: `sqlite`, the database's repository, is `postgres` on
        /// PostgreSQL; `nil` for `postgres` on SQLite, which has no PostgreSQL database to read.
        func repositoryVariant(named name: String) -> String? {
            switch (self, name) {
            case (.postgres, "sqlite"): "postgres"
            case (.sqlite, "postgres"): nil
            default: name
            }
        }
    }

    /// A per-request override rule: a request header whose value selects a variant of an entry.
    struct OverrideRule: Sendable, Hashable {
        var header: String
        var entry: String
        var variants: [String]
        /// The header's name, parsed once instead of per request.
        let headerName: HTTPField.Name

        /// A rule for `header`, which must be a valid header name (`HTTPHeaderName.isValid`).
        init(header: String, entry: String, variants: [String]) {
            self.header = header
            self.entry = entry
            self.variants = variants
            self.headerName = HTTPField.Name(header)!
        }
    }

    var profile: Profile
    /// The profile file the settings were read from.
    var file: String
    /// Where the server listens and what it calls itself, read by Hummingbird from `http.*`
    /// (`http.host`, `http.port`).
    var server: ApplicationConfiguration
    /// `http.host:http.port`: what a reload cannot change.
    var listenAddress: String
    /// The HTTP/1 channel's settings, read by Hummingbird from `http.*`: `http.idleTimeout`,
    /// seconds a connection may stay idle, or part-way through a request, before it is closed.
    var http1: HTTP1Channel.Configuration
    /// Which database keeps the catalog: `database.kind`, `sqlite` (the default) or `postgres`.
    var databaseKind: DatabaseKind
    /// The SQLite database, used when ``databaseKind`` is `sqlite`.
    var database: SQLiteConfiguration
    /// The PostgreSQL database from `database.url`, when ``databaseKind`` is `postgres`; it
    /// shows its URL with the password redacted.
    var postgres: PostgresConfiguration?
    /// Whether to fill an empty database with the sample catalog; never in production.
    var seed: Bool
    /// The `movieRepository` variant the root uses: `catalog.repository`, where `sqlite` (the
    /// database's repository) means `postgres` when the database is PostgreSQL.
    var repositoryVariant: String
    var overrideRule: OverrideRule?
    /// Whether the debug routes (`/debug/scope`, `/debug/echo`, `/debug/stats`) are served;
    /// never in production.
    var debugRoutes: Bool
    /// Whether metrics are collected (Hummingbird's `MetricsMiddleware` and the root's, into
    /// the Prometheus registry `GET /metrics` renders); on unless `metrics.enabled` is false.
    var metricsEnabled: Bool
    /// The `otel` section: where spans and metrics are sent over OTLP, when
    /// `otel.exporter.otlp.endpoint` (`OTEL_EXPORTER_OTLP_ENDPOINT`) is set.
    var otlp: OTLPSettings?
    /// How long a graceful shutdown waits for requests in flight.
    var shutdownTimeout: Duration
    /// How long a service's close may run before it is abandoned and logged, in a request's
    /// scope or at shutdown: `shutdown.closeTimeout`.
    var closeTimeout: Duration
    package var logLevel: Logger.Level
    /// The `tenants` section, when `tenants.enabled` is true: each tenant's own database, and
    /// the files of `Config/tenants/` over the profile for theirs.
    var tenants: TenantSettings?
    /// `settings.fromDatabase`: settings kept in the PostgreSQL database, over the files and
    /// under the environment, for every instance on it; `nil` when off (the default).
    var databaseSettings: DatabaseSettings?
    /// With `tenants.fromDatabase`: the tenant registry in PostgreSQL, read at start-up, and the
    /// tenants this instance accepted from it.
    var tenantRegistry: (registry: PostgresTenantRegistry, accepted: AcceptedTenants)?

    /// `settings.pollInterval`: how often the settings and the tenant registry kept in the
    /// database are read when no notification came (5 s by default).
    var registryPollInterval = Duration.seconds(5)

    /// Where settings kept in the database come from, and the version these were read at.
    struct DatabaseSettings: Sendable {
        /// `settings.pollInterval`: how often the database is read when no notification came.
        var pollInterval: Duration
        /// The provider, once start-up made it: every reload reads the version it read last.
        var provider: PostgresSettingsProvider?
        /// The version this configuration was read at.
        var version: Int64 = 0
    }

    /// The keys an operator may set in the database, with their types.
    ///
    /// These are keys a reload applies (`SELECT scoped_set_setting('log.level', '"debug"')`); a
    /// key only a restart applies is refused by the statement itself.
    static let databaseSettingKeys: [String: PostgresSettingType] = [
        "log.level": .string,
        "catalog.repository": .string,
        "overrides.header": .string,
        "overrides.entry": .string,
        "overrides.variants": .stringArray,
        "database.leaseTimeout": .number,
        "database.statementTimeout": .number,
        "shutdown.closeTimeout": .number,
    ]

    /// Seconds a connection may stay idle when the profile does not say.
    static let defaultIdleTimeout = 60.0

    /// How long a connection may stay idle: `http.idleTimeout`, which loading always sets.
    var idleTimeout: TimeAmount { http1.idleTimeout ?? .milliseconds(Int64(Self.defaultIdleTimeout * 1000)) }

    /// Loads the profile named by `APP_ENV` (default `development`) from `CONFIG_DIR` (default
    /// `Config`), with the file named by `CONFIG_FILE`, when set, over it, and `environment`
    /// over both.
    ///
    /// - Throws: ``ConfigurationError`` naming the key and the file (or variable) when a value
    ///   is missing or invalid.
    package static func load(environment: [String: String]) async throws -> AppConfiguration {
        let files = try ConfigurationFiles(environment: environment)
        let profile = try await files.read(files.profile)
        var overlay: Configuration.FileProvider<JSONSnapshot>?
        if let overlayFile = files.overlay { overlay = try await files.read(overlayFile) }
        var configuration = try read(files: files, profile: profile, overlay: overlay, environment: environment)
        if configuration.tenants?.fromDatabase == true, let postgres = configuration.postgres {
            let registry = PostgresTenantRegistry(
                configuration: postgres,
                settingKeys: TenantRegistryFollower.settingKeys,
                pollInterval: configuration.registryPollInterval,
                logger: Logger(label: "tenants")
            )
            do {
                try await registry.load()
            } catch {
                throw ConfigurationError(key: "tenants.fromDatabase", source: postgres.redactedURL, message: "\(error)")
            }
            configuration.tenantRegistry = (registry, try AcceptedTenants(registry))
        }
        guard var settings = configuration.databaseSettings, let postgres = configuration.postgres else {
            return configuration
        }
        // Settings kept in the database: read them now, and the configuration again over them.
        let provider = PostgresSettingsProvider(
            configuration: postgres,
            keys: databaseSettingKeys,
            pollInterval: settings.pollInterval,
            logger: Logger(label: "settings")
        )
        do {
            try await provider.load()
        } catch {
            throw ConfigurationError(key: "settings.fromDatabase", source: postgres.redactedURL, message: "\(error)")
        }
        let snapshot = provider.currentSnapshot
        let registry = configuration.tenantRegistry
        configuration = try read(
            files: files,
            profile: profile,
            overlay: overlay,
            environment: environment,
            settings: snapshot
        )
        settings.provider = provider
        settings.version = snapshot.version
        configuration.databaseSettings = settings
        configuration.tenantRegistry = registry
        return configuration
    }

    /// The settings `profile`'s file and `overlay`'s hold, with `settings` (one version of those
    /// kept in the database) over them and `environment` over all: what ``load(environment:)``
    /// reads at start-up, and a reload reads as they changed.
    ///
    /// - Throws: ``ConfigurationError`` naming the key and where its value came from.
    static func read(
        files: ConfigurationFiles,
        profile profileProvider: any ConfigProvider,
        overlay overlayProvider: (any ConfigProvider)?,
        environment: [String: String],
        settings: PostgresSettingsSnapshot? = nil
    ) throws -> AppConfiguration {
        let profile = files.profileName
        let file = files.profile
        let reader = ConfigReader(
            providers: [EnvironmentVariablesProvider(environmentVariables: environment)]
                + (settings.map { [$0] } ?? []) + (overlayProvider.map { [$0] } ?? []) + [profileProvider]
        )
        var overlay: (file: String, reader: ConfigReader)?
        if let overlayFile = files.overlay, let overlayProvider {
            overlay = (overlayFile, ConfigReader(provider: overlayProvider))
        }
        let values = ConfigValues(
            reader: reader,
            file: file,
            overlay: overlay,
            settings: settings.map { ($0.description, ConfigReader(provider: $0)) },
            environment: environment
        )

        var configuration = AppConfiguration(
            profile: profile,
            file: file,
            server: try serverConfiguration(reader, values: values),
            listenAddress:
                "\(try values.string("http.host", default: "127.0.0.1")):\(try values.int("http.port", in: 0...65535))",
            http1: try http1Configuration(reader, values: values),
            databaseKind: try values.choice("database.kind", default: .sqlite) { DatabaseKind(rawValue: $0) },
            database: SQLiteConfiguration(
                path: try values.string("database.path"),
                readers: try values.int("database.readers", default: 4, in: 1...64),
                synchronous: try values.choice("database.synchronous", default: .full) {
                    SQLiteConfiguration.Synchronous(rawValue: $0.uppercased())
                },
                busyTimeout: .milliseconds(
                    Int64(try values.seconds("database.busyTimeout", default: 5, in: 0...3600) * 1000)
                ),
                migrations: SQLiteMovieRepository.migrations,
                leaseTimeout: .milliseconds(
                    Int64(try values.seconds("database.leaseTimeout", default: 5, in: 0.01...600) * 1000)
                ),
                statementTimeout: .milliseconds(
                    Int64(try values.seconds("database.statementTimeout", default: 10, in: 0.01...3600) * 1000)
                )
            ),
            postgres: nil,
            seed: try values.bool("database.seed", default: false),
            repositoryVariant: try values.choice("catalog.repository", default: "sqlite") {
                CatalogVariants.make().names(of: CatalogVariants.entry).contains($0) ? $0 : nil
            },
            overrideRule: nil,
            debugRoutes: try values.bool("debug.routes", default: false),
            metricsEnabled: try values.bool("metrics.enabled", default: true),
            otlp: try OTLPSettings.read(values),
            shutdownTimeout: .seconds(try values.int("shutdown.timeout", default: 10, in: 0...3600)),
            closeTimeout: .milliseconds(
                Int64(try values.seconds("shutdown.closeTimeout", default: 5, in: 0.01...3600) * 1000)
            ),
            logLevel: try values.choice("log.level", default: .info) { Logger.Level(rawValue: $0) },
            tenants: nil,
            databaseSettings: nil,
            tenantRegistry: nil
        )
        guard let variant = configuration.databaseKind.repositoryVariant(named: configuration.repositoryVariant) else {
            throw values.error("catalog.repository", "'postgres' needs database.kind postgres")
        }
        configuration.repositoryVariant = variant
        if configuration.databaseKind == .postgres {
            let url = try values.string("database.url")
            do {
                var postgres = try PostgresConfiguration(
                    url: url,
                    maximumConnections: try values.int("database.connections", default: 20, in: 1...1000),
                    migrations: PostgresMovieRepository.migrations
                )
                // The same deadlines on both backends.
                postgres.leaseTimeout = configuration.database.leaseTimeout
                postgres.statementTimeout = configuration.database.statementTimeout
                configuration.postgres = postgres
            } catch let error as PostgresConfigurationError {
                throw values.error("database.url", error.problem + " (\(error.url))")
            }
        }
        if let header = try values.optionalString("overrides.header") {
            guard HTTPHeaderName.isValid(header) else {
                throw values.error("overrides.header", "'\(header)' is not a valid header name")
            }
            let entry = try values.string("overrides.entry")
            let known = CatalogVariants.make().names(of: entry)
            guard !known.isEmpty else {
                throw values.error("overrides.entry", "'\(entry)' has no variants; known: \(CatalogVariants.entry)")
            }
            let variants = try values.stringArray("overrides.variants")
            if let unknown = variants.first(where: { !known.contains($0) }) {
                throw values.error(
                    "overrides.variants",
                    "'\(unknown)' is not a variant of \(entry); known: \(known.joined(separator: ", "))"
                )
            }
            configuration.overrideRule = OverrideRule(header: header, entry: entry, variants: variants)
        }
        let pollSeconds = try values.seconds("settings.pollInterval", default: 5, in: 0.1...3600)
        configuration.registryPollInterval = .milliseconds(Int64(pollSeconds * 1000))
        if try values.bool("settings.fromDatabase", default: false) {
            guard configuration.databaseKind == .postgres else {
                throw values.error(
                    "settings.fromDatabase",
                    "settings are kept in PostgreSQL: it needs database.kind postgres"
                )
            }
            configuration.databaseSettings = DatabaseSettings(pollInterval: configuration.registryPollInterval)
        }
        if try values.bool("tenants.enabled", default: false) {
            configuration.tenants = try TenantSettings.read(
                values,
                folder: files.tenantsFolder,
                profile: profile,
                databaseKind: configuration.databaseKind
            )
            if try values.bool("tenants.fromDatabase", default: false) {
                guard configuration.databaseKind == .postgres else {
                    throw values.error(
                        "tenants.fromDatabase",
                        "tenants are kept in PostgreSQL: it needs database.kind postgres"
                    )
                }
                configuration.tenants?.fromDatabase = true
            }
        }
        if profile == .production {
            if configuration.overrideRule != nil {
                throw values.error("overrides.header", "production profiles accept no client-controlled override")
            }
            if configuration.debugRoutes {
                throw values.error("debug.routes", "debug routes are never served in production")
            }
            if configuration.seed {
                throw values.error("database.seed", "production never seeds its database")
            }
        }
        return configuration
    }
}

/// Hummingbird's own reading of `http.host` and `http.port`, after checking that both are
/// valid: Hummingbird ignores a value it cannot read, and the server must not start on a
/// default port when the configured one is wrong.
private func serverConfiguration(_ reader: ConfigReader, values: ConfigValues) throws -> ApplicationConfiguration {
    _ = try values.string("http.host", default: "127.0.0.1")
    _ = try values.int("http.port", in: 0...65535)
    var configuration = ApplicationConfiguration(reader: reader.scoped(to: "http"))
    configuration.serverName = "ExampleServer"
    return configuration
}

/// Hummingbird's own reading of `http.idleTimeout`, after checking it is a positive number of seconds.
///
/// Every profile sets one; without it the server still closes idle connections after
/// ``AppConfiguration/defaultIdleTimeout``, so a slow client never holds a connection forever.
private func http1Configuration(_ reader: ConfigReader, values: ConfigValues) throws -> HTTP1Channel.Configuration {
    let seconds = try values.seconds("http.idleTimeout", default: AppConfiguration.defaultIdleTimeout, in: 0.001...3600)
    var configuration = HTTP1Channel.Configuration(reader: reader.scoped(to: "http"))
    if configuration.idleTimeout == nil { configuration.idleTimeout = .milliseconds(Int64(seconds * 1000)) }
    return configuration
}

/// A configuration value that is missing or invalid; start-up stops and prints it.
struct ConfigurationError: Error, CustomStringConvertible {
    /// The key, such as `http.port`.
    var key: String
    /// Where the value came from: the profile file, or the environment variable over it.
    var source: String
    var message: String

    var description: String { "Invalid configuration: \(key) in \(source): \(message)" }
}

/// Header names as HTTP defines them: a token.
enum HTTPHeaderName {
    static func isValid(_ name: String) -> Bool {
        !name.isEmpty
            && name.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || "!#$%&'*+-.^_`|~".utf8.contains(byte)
            }
    }
}
