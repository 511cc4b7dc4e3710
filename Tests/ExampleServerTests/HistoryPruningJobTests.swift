import Foundation
import MovieCatalog
import Logging
import Scoped
import ScopedReload
import ScopedSQLite
import ScopedTenants
import ScopedTestSupport
import ScopedTesting
import ServiceLifecycle
import Testing

@testable import CatalogApp

/// The periodic job that prunes the movie history: one scope per run.
@Suite(.scoped { $0.movieRepository = SQLiteMovieRepository() })
struct HistoryPruningJobTests {
    private let logger = Logger(label: "test")

    /// Adds history entries to the server's database (or the file `file` in `folder`) through
    /// a second handle, `age` ago.
    private func addEntries(
        _ folder: TemporaryFolder,
        file: String = "catalog.sqlite",
        count: Int,
        changedAt: String
    ) async throws {
        let database = try await SQLiteDatabase.open(
            SQLiteConfiguration(path: folder.path(file), migrations: SQLiteMovieRepository.migrations)
        )
        try await database.write { transaction in
            for movieID in 1...count {
                _ = try transaction.insert(
                    """
                    INSERT INTO movie_changes (movie_id, action, request_id, changed_at)
                    VALUES (\(movieID), 'created', 'seed', \(changedAt))
                    """
                )
            }
        }
        await database.close()
    }

    private func entryCount(_ folder: TemporaryFolder, file: String = "catalog.sqlite") async throws -> Int {
        let database = try await SQLiteDatabase.open(SQLiteConfiguration(path: folder.path(file)))
        let count = try await database.read { try $0.scalar("SELECT count(*) FROM movie_changes", as: Int.self) }
        await database.close()
        return count ?? 0
    }

    @Test func eachRunDeletesOnlyOldEntriesInAScopeOfItsOwn() async throws {
        let folder = try TemporaryFolder()
        let (_, root) = try await makeApplication(try await loadConfiguration(.development, folder: folder))
        try await addEntries(folder, count: 5, changedAt: "2000-01-01T00:00:00.000Z")
        try await addEntries(folder, count: 3, changedAt: "2999-01-01T00:00:00.000Z")
        let job = HistoryPruningJob(root: root, retention: .seconds(86400), logger: logger)

        #expect(try await job.runOnce() == 5)
        #expect(root.openScopeCount == 0)  // the run's scope closed, its transaction committed
        #expect(try await entryCount(folder) == 3)
        #expect(try await job.runOnce() == 0)
        await root.shutdown()
    }

    @Test func withTenantsEachRunPrunesEveryTenantsHistoryInAScopeOfThatTenant() async throws {
        let folder = try TemporaryFolder()
        let configuration = try await loadConfiguration(
            .multitenant,
            folder: folder,
            environment: ["TENANTS_DIRECTORY": folder.path("tenants")]
        )
        let (_, root) = try await makeApplication(configuration)
        for tenant in ["a", "b"] {
            try await addEntries(
                folder,
                file: "tenants/\(tenant).sqlite",
                count: 2,
                changedAt: "2000-01-01T00:00:00.000Z"
            )
            try await addEntries(
                folder,
                file: "tenants/\(tenant).sqlite",
                count: 1,
                changedAt: "2999-01-01T00:00:00.000Z"
            )
        }
        let job = HistoryPruningJob(
            root: root,
            retention: .seconds(86400),
            logger: logger,
            tenants: CatalogServer.knownTenants(configuration, root: ReloadableScopeRoot(root))
        )
        #expect(try await job.runOnce() == 4)
        #expect(try await entryCount(folder, file: "tenants/a.sqlite") == 1)
        #expect(try await entryCount(folder, file: "tenants/b.sqlite") == 1)
        #expect(root.tenantStatistics.open == 2)
        await root.shutdown()
        // No application database was opened: with tenants there is none.
        #expect(!FileManager.default.fileExists(atPath: folder.path("catalog.sqlite")))
    }

    @Test func theJobRunsPeriodicallyUntilGracefulShutdown() async throws {
        let folder = try TemporaryFolder()
        let (_, root) = try await makeApplication(try await loadConfiguration(.development, folder: folder))
        let job = HistoryPruningJob(
            root: ReloadableScopeRoot(root),
            interval: .milliseconds(20),
            retention: .seconds(86400),
            logger: logger
        )
        let group = ServiceGroup(services: [job], logger: logger)
        let running = Task { try await group.run() }

        // Entries added while the job runs are pruned by a later run.
        for _ in 1...2 {
            try await addEntries(folder, count: 4, changedAt: "2000-01-01T00:00:00.000Z")
            #expect(try await eventually { try await entryCount(folder) == 0 })
        }

        await group.triggerGracefulShutdown()
        try await running.value
        #expect(root.openScopeCount == 0)
        await root.shutdown()
    }
}

/// `ExampleServer prune-history`: the same work as a command.
@Suite(.scoped { $0.movieRepository = SQLiteMovieRepository() })
struct PruneHistoryCommandTests {
    @Test func theCommandPrunesInOneScopeThenClosesTheDatabase() async throws {
        let folder = try TemporaryFolder()
        let configuration = try await loadConfiguration(.development, folder: folder)
        let (_, root) = try await makeApplication(configuration)  // creates the file and its tables
        await root.shutdown()
        let database = try await SQLiteDatabase.open(SQLiteConfiguration(path: folder.path("catalog.sqlite")))
        try await database.write { transaction in
            for (movieID, changedAt) in [(1, "2000-01-01T00:00:00.000Z"), (2, "2999-01-01T00:00:00.000Z")] {
                _ = try transaction.insert(
                    "INSERT INTO movie_changes (movie_id, action, changed_at) VALUES (\(movieID), 'created', \(changedAt))"
                )
            }
        }

        #expect(try await CatalogServer.pruneHistory(configuration, logger: Logger(label: "test")) == 1)
        let left = try await database.read { try $0.query("SELECT movie_id AS id FROM movie_changes", as: Row.self) }
        #expect(left.map(\.id) == [2])
        await database.close()
    }

    private struct Row: Decodable, Sendable {
        var id: Int
    }
}
