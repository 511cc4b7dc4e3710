import MovieCatalog
import Foundation
import Hummingbird
import Logging
import HummingbirdCore
import NIOCore
import ScopedSQLite
import Testing

@testable import CatalogApp
import ScopedTestSupport

struct AppConfigurationTests {
    /// A config folder holding one profile file with `contents`.
    private func folder(_ profile: String, _ contents: String) throws -> TemporaryFolder {
        let folder = try TemporaryFolder()
        try Data(contents.utf8).write(to: folder.url.appending(path: "\(profile).json"))
        return folder
    }

    @Test func developmentProfileIsTheDefaultWithItsOverrideRule() async throws {
        let configuration = try await AppConfiguration.load(environment: ["CONFIG_DIR": repositoryConfigFolder])
        #expect(configuration.profile == .development)
        #expect(configuration.server.address == .hostname("127.0.0.1", port: 8080))
        #expect(configuration.http1.idleTimeout == .seconds(60))
        #expect(configuration.seed)
        #expect(configuration.database.synchronous == .full)
        #expect(
            configuration.overrideRule == .init(header: "X-Catalog", entry: "movieRepository", variants: ["fixture"])
        )
        #expect(configuration.debugRoutes)
    }

    @Test func productionProfileHasNoOverrideRuleNoDebugRoutesAndNoSeed() async throws {
        let configuration = try await AppConfiguration.load(environment: [
            "CONFIG_DIR": repositoryConfigFolder, "APP_ENV": "production",
        ])
        #expect(configuration.overrideRule == nil)
        #expect(configuration.http1.idleTimeout == .seconds(30))
        #expect(!configuration.debugRoutes)
        #expect(!configuration.seed)
        // Metrics hold no secrets: every profile collects them.
        #expect(configuration.metricsEnabled)
    }

    @Test func databaseDeadlinesComeFromTheProfileAndTheEnvironment() async throws {
        let folder = try TemporaryFolder()
        let configuration = try await loadConfiguration(
            .development,
            folder: folder,
            environment: ["DATABASE_STATEMENT_TIMEOUT": "0.25"]
        )
        #expect(configuration.database.statementTimeout == .milliseconds(250))
        #expect(configuration.database.leaseTimeout == .seconds(5))
    }

    @Test func environmentVariablesOverrideTheFile() async throws {
        let configuration = try await AppConfiguration.load(environment: [
            "CONFIG_DIR": repositoryConfigFolder, "HTTP_PORT": "9999", "DATABASE_PATH": "/tmp/x.sqlite",
            "HTTP_HOST": "127.0.0.2",
            "HTTP_IDLE_TIMEOUT": "2.5",
        ])
        #expect(configuration.server.address == .hostname("127.0.0.2", port: 9999))
        #expect(configuration.http1.idleTimeout == .milliseconds(2500))
        #expect(configuration.database.path == "/tmp/x.sqlite")
        #expect(configuration.metricsEnabled)
        let withoutMetrics = try await AppConfiguration.load(environment: [
            "CONFIG_DIR": repositoryConfigFolder, "METRICS_ENABLED": "false",
        ])
        #expect(!withoutMetrics.metricsEnabled)
    }

    @Test(arguments: [
        (["HTTP_PORT": "eighty"], "http.port", "environment variable HTTP_PORT"),
        (["HTTP_PORT": "70000"], "http.port", "environment variable HTTP_PORT"),
        (["HTTP_IDLE_TIMEOUT": "soon"], "http.idleTimeout", "environment variable HTTP_IDLE_TIMEOUT"),
        (["HTTP_IDLE_TIMEOUT": "0"], "http.idleTimeout", "environment variable HTTP_IDLE_TIMEOUT"),
        (["DATABASE_SYNCHRONOUS": "sometimes"], "database.synchronous", "environment variable DATABASE_SYNCHRONOUS"),
        (["CATALOG_REPOSITORY": "postgres"], "catalog.repository", "environment variable CATALOG_REPOSITORY"),
        (["CATALOG_REPOSITORY": "mysql"], "catalog.repository", "environment variable CATALOG_REPOSITORY"),
        (["METRICS_ENABLED": "sometimes"], "metrics.enabled", "environment variable METRICS_ENABLED"),
        (
            ["DATABASE_STATEMENT_TIMEOUT": "0"], "database.statementTimeout",
            "environment variable DATABASE_STATEMENT_TIMEOUT"
        ),
        (["DATABASE_LEASE_TIMEOUT": "soon"], "database.leaseTimeout", "environment variable DATABASE_LEASE_TIMEOUT"),
        (["SHUTDOWN_CLOSE_TIMEOUT": "0"], "shutdown.closeTimeout", "environment variable SHUTDOWN_CLOSE_TIMEOUT"),
        (
            ["OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4318"], "otel.exporter.otlp.endpoint",
            "environment variable OTEL_EXPORTER_OTLP_ENDPOINT"
        ),
        (
            ["OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"],
            "otel.exporter.otlp.protocol", "environment variable OTEL_EXPORTER_OTLP_PROTOCOL"
        ),
    ])
    func invalidEnvironmentValueNamesTheKeyAndTheVariable(environment: [String: String], key: String, source: String)
        async throws
    {
        let error = try await #require(throws: ConfigurationError.self) {
            try await AppConfiguration.load(
                environment: ["CONFIG_DIR": repositoryConfigFolder].merging(environment) { $1 }
            )
        }
        #expect(error.key == key)
        #expect(error.source == source)
        #expect(error.description.contains(key))
    }

    @Test func settingsFromTheDatabaseNeedPostgreSQL() async throws {
        let error = try await #require(throws: ConfigurationError.self) {
            try await AppConfiguration.load(environment: [
                "CONFIG_DIR": repositoryConfigFolder, "SETTINGS_FROM_DATABASE": "true",
            ])
        }
        #expect(error.key == "settings.fromDatabase")
        #expect(error.source == "environment variable SETTINGS_FROM_DATABASE")
        #expect(error.message.contains("needs database.kind postgres"))
    }

    /// Environment variables, then the database, then `CONFIG_FILE`, then the profile; an
    /// invalid value from the database is named with its version.
    @Test(.enabled(if: PostgresTestServer.isEnabled, Comment(rawValue: PostgresTestServer.unavailableReason ?? "")))
    func databaseSettingsComeBetweenTheEnvironmentAndTheConfigFile() async throws {
        let server = try await PostgresTestServer.shared()
        let database = try await server.makeDatabase()
        let folder = try TemporaryFolder()
        let overlay = folder.path("deployment.json")
        try Data(#"{"log": {"level": "error"}, "shutdown": {"closeTimeout": 7}}"#.utf8)
            .write(to: URL(filePath: overlay))
        let environment = [
            "CONFIG_DIR": repositoryConfigFolder, "CONFIG_FILE": overlay, "DATABASE_KIND": "postgres",
            "DATABASE_URL": database.url, "SETTINGS_FROM_DATABASE": "true",
        ]
        // The first load creates the functions; nothing is set yet: the file's values.
        let before = try await AppConfiguration.load(environment: environment)
        #expect(before.logLevel == .error)
        #expect(before.databaseSettings?.version == 0)
        try await server.psql(
            "SELECT scoped_set_setting('log.level', '\"debug\"'); SELECT scoped_set_setting('shutdown.closeTimeout', '3')",
            database: database.name
        )
        let fromDatabase = try await AppConfiguration.load(environment: environment)
        #expect(fromDatabase.logLevel == .debug)
        #expect(fromDatabase.closeTimeout == .seconds(3))
        #expect(fromDatabase.databaseSettings?.version == 2)
        let fromEnvironment = try await AppConfiguration.load(
            environment: environment.merging(["LOG_LEVEL": "notice"]) { $1 }
        )
        #expect(fromEnvironment.logLevel == .notice)
        #expect(fromEnvironment.closeTimeout == .seconds(3))
        // A key that only a restart applies cannot be set from the database at all.
        await #expect(throws: PostgresTestServerError.self) {
            try await server.psql("SELECT scoped_set_setting('http.port', '9')", database: database.name)
        }
        try await server.psql("SELECT scoped_set_setting('log.level', '\"loud\"')", database: database.name)
        let error = try await #require(throws: ConfigurationError.self) {
            try await AppConfiguration.load(environment: environment)
        }
        #expect(error.key == "log.level")
        #expect(error.source == "PostgreSQL settings, version 3")
    }

    @Test func invalidFileValueNamesTheKeyAndTheFile() async throws {
        let folder = try folder("development", #"{"http": {"port": "eighty"}, "database": {"path": "x.sqlite"}}"#)
        let error = try await #require(throws: ConfigurationError.self) {
            try await AppConfiguration.load(environment: ["CONFIG_DIR": folder.url.path])
        }
        #expect(error.key == "http.port")
        #expect(error.source.hasSuffix("development.json"))
    }

    @Test func theCollectorComesFromOpenTelemetrysVariablesOrTheFile() async throws {
        let none = try await AppConfiguration.load(environment: ["CONFIG_DIR": repositoryConfigFolder])
        #expect(none.otlp == nil)
        let fromEnvironment = try await AppConfiguration.load(environment: [
            "CONFIG_DIR": repositoryConfigFolder, "OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318/",
            "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json", "OTEL_SERVICE_NAME": "catalog-eu",
        ])
        let settings = try #require(fromEnvironment.otlp)
        #expect(settings.url(of: "v1/traces") == "http://collector:4318/v1/traces")
        #expect(settings.encoding == .json)
        #expect(settings.serviceName == "catalog-eu")
        let folder = try folder(
            "development",
            #"{"http": {"port": 8080}, "database": {"path": "x.sqlite"}, "otel": {"exporter": {"otlp": {"endpoint": "https://otel.example.com"}}}}"#
        )
        let fromFile = try #require(try await AppConfiguration.load(environment: ["CONFIG_DIR": folder.url.path]).otlp)
        #expect(fromFile.url(of: "v1/metrics") == "https://otel.example.com/v1/metrics")
        #expect(fromFile.encoding == .protobuf)
        #expect(fromFile.serviceName == "movie-catalog")
    }

    @Test func missingRequiredValueNamesTheKeyAndTheFile() async throws {
        let folder = try folder("development", #"{"http": {"port": 8080}}"#)
        let error = try await #require(throws: ConfigurationError.self) {
            try await AppConfiguration.load(environment: ["CONFIG_DIR": folder.url.path])
        }
        #expect(error.key == "database.path")
        #expect(error.description.contains("is required"))
        #expect(error.description.contains("development.json"))
    }

    @Test func malformedOrMissingFileIsNamed() async throws {
        let malformed = try folder("development", "{ not json")
        let error = try await #require(throws: ConfigurationError.self) {
            try await AppConfiguration.load(environment: ["CONFIG_DIR": malformed.url.path])
        }
        #expect(error.source.hasSuffix("development.json"))
        let empty = try TemporaryFolder()
        let missing = try await #require(throws: ConfigurationError.self) {
            try await AppConfiguration.load(environment: ["CONFIG_DIR": empty.url.path, "APP_ENV": "test"])
        }
        #expect(missing.source.hasSuffix("test.json"))
    }

    @Test func unknownProfileIsRefused() async throws {
        let error = try await #require(throws: ConfigurationError.self) {
            try await AppConfiguration.load(environment: ["CONFIG_DIR": repositoryConfigFolder, "APP_ENV": "staging"])
        }
        #expect(error.key == "APP_ENV")
    }

    @Test(arguments: [
        (
            #""overrides": {"header": "X-Catalog", "entry": "movieRepository", "variants": ["fixture"]}"#,
            "overrides.header"
        ),
        (#""debug": {"routes": true}"#, "debug.routes"),
        (#""database": {"path": "p.sqlite", "seed": true}"#, "database.seed"),
    ])
    func productionRefusesClientOverridesDebugRoutesAndSeeding(fragment: String, key: String) async throws {
        let database = fragment.contains("\"database\"") ? "" : #""database": {"path": "p.sqlite"}, "#
        let folder = try folder("production", #"{"http": {"port": 8080}, \#(database)\#(fragment)}"#)
        let error = try await #require(throws: ConfigurationError.self) {
            try await AppConfiguration.load(environment: ["CONFIG_DIR": folder.url.path, "APP_ENV": "production"])
        }
        #expect(error.key == key)
        #expect(error.source.hasSuffix("production.json"))
    }
}
