import Hummingbird
import HummingbirdTesting
import Logging
import MovieCatalog
import Scoped
import ScopedServiceLifecycle
import ScopedTesting

@testable import CatalogApp

/// Runs `body` against the example server, live on loopback, on `database`, as `run` starts
/// it: the root's services running, validated and seeded; then stops it and shuts the root
/// down (which waits for work handed off past a response).
///
/// - Parameters:
///   - database: the database, which the test may read before and after.
///   - profile: the configuration profile.
///   - repository: the repository the root starts from; by default the backend's own. A
///     repository other than the backend's own is used as is: no variant is selected.
///   - body: the test, with a client, the root and the database.
/// - Throws: what loading, start-up or `body` throws.
func withCatalogServer(
    on database: TestDatabase,
    profile: AppConfiguration.Profile = .development,
    repository: (any MovieRepository)? = nil,
    _ body: @escaping @Sendable (any TestClientProtocol, ScopeRoot, TestDatabase) async throws -> Void
) async throws {
    var configuration = try await loadConfiguration(profile, folder: database.folder, environment: database.environment)
    if repository != nil { configuration.repositoryVariant = "sqlite" }
    var logger = Logger(label: "test")
    logger.logLevel = .warning
    try await withScopedValues({ $0.movieRepository = repository ?? database.backend.repository }) {
        let root = try CatalogServer.makeRoot(configuration, base: .current)
        try await root.withRunningServices(logger: logger) {
            try await CatalogServer.prepare(root, configuration: configuration, logger: logger)
            let app = CatalogServer.makeApplication(root: root, configuration: configuration, logger: logger)
            try await app.test(.live) { client in try await body(client, root, database) }
        }
    }
}

/// Runs `body` against the example server on a new database on `backend`.
func withCatalogServer(
    on backend: Backend,
    profile: AppConfiguration.Profile = .development,
    repository: (any MovieRepository)? = nil,
    _ body: @escaping @Sendable (any TestClientProtocol, ScopeRoot, TestDatabase) async throws -> Void
) async throws {
    try await withCatalogServer(on: try TestDatabase(backend), profile: profile, repository: repository, body)
}
