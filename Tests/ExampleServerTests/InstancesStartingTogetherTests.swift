import Logging
import MovieCatalog
import Scoped
import ScopedServiceLifecycle
import ScopedTestSupport
import Testing

@testable import CatalogApp

/// What several instances of the example server do when they start at once on one database.
struct InstancesStartingTogetherTests {
    /// Three instances, each validating its root and seeding the development catalog at the same
    /// moment on one empty database, leave the sample movies in it once (without the seeding
    /// lock, PostgreSQL's three read-committed transactions each saw an empty catalog: 18 movies).
    @Test(arguments: Backend.available)
    func threeInstancesStartingTogetherSeedTheCatalogOnce(backend: Backend) async throws {
        let database = try await TestDatabase(backend)
        // On SQLite the instances' seeding transactions wait for each other's write lock: for
        // up to 30 s here, where the suite's other tests may keep a holder from its next
        // statement for seconds (5 s, the default, was passed once in a full run).
        let configuration = try await loadConfiguration(
            .development,
            folder: database.folder,
            environment: database.environment.merging(["DATABASE_BUSY_TIMEOUT": "30"]) { $1 }
        )
        let logger = {
            var logger = Logger(label: "test")
            logger.logLevel = .warning
            return logger
        }()
        // Each instance as `run` starts it: its own root and pool, validated and seeded with its
        // running services (PostgreSQL's client) running, all three at once.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<3 {
                group.addTask {
                    try await withScopedValues({ $0.movieRepository = backend.repository }) {
                        let root = try CatalogServer.makeRoot(configuration, base: .current)
                        try await root.withRunningServices(logger: logger) {
                            try await CatalogServer.prepare(root, configuration: configuration, logger: logger)
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await database.integer("SELECT count(*) FROM movies") == SampleCatalog.movies.count)
        #expect(
            try await database.integer("SELECT count(DISTINCT title) FROM movies") == SampleCatalog.movies.count
        )
    }
}
