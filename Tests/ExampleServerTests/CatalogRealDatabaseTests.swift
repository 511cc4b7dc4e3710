import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import MovieCatalog
import Scoped
import ScopedDatabase
import ScopedPostgres
import ScopedSQLite
import ScopedServiceLifecycle
import ScopedTestSupport
import ScopedTesting
import Synchronization
import Testing

@testable import CatalogApp

/// One catalog database on the PostgreSQL test server, shared by the tests below, each of them
/// in a transaction of its own that is rolled back when it ends.
struct SharedCatalogDatabase: ScopedDatabase.TestDatabase {
    private static let url = Mutex<Task<String, any Error>?>(nil)

    /// The database's URL, made and migrated on first use.
    static func shared() async throws -> String {
        let making = url.withLock { url in
            if let url { return url }
            let making = Task { try await PostgresTestServer.shared().makeDatabase().url }
            url = making
            return making
        }
        return try await making.value
    }

    func withIsolation<R: Sendable>(
        for test: String,
        _ body: (@escaping @Sendable (inout ScopedValues) -> Void) async throws -> R
    ) async throws -> R {
        let configuration = try await PostgresConfiguration(
            url: try Self.shared(),
            migrations: PostgresMovieRepository.migrations
        )
        return try await PostgresTestDatabase.postgres(configuration).withIsolation(for: test, body)
    }
}

private let sqliteCases = Rendezvous(parties: 2)
private let postgresCases = Rendezvous(parties: 2)

/// The example's router, through Hummingbird's test client, on a real database that each test
/// leaves as it found it: what Testing.md shows.
struct CatalogRealDatabaseTests {
    /// Runs `test` against the application built as in production, on `backend`, inside the test.
    private func withApp(
        on backend: Backend,
        _ test: @escaping @Sendable (any TestClientProtocol) async throws -> Void
    ) async throws {
        let folder = try TemporaryFolder()
        var environment: [String: String] = [:]
        if backend == .postgres {
            environment = ["DATABASE_KIND": "postgres", "DATABASE_URL": try await SharedCatalogDatabase.shared()]
        }
        let configuration = try await loadConfiguration(.test, folder: folder, environment: environment)
        var logger = Logger(label: "test")
        logger.logLevel = .warning
        try await withScopedValues({ $0.movieRepository = backend.repository }) {
            let root = try CatalogServer.makeRoot(configuration, base: .current)
            try await root.withRunningServices(logger: logger) {
                try await CatalogServer.prepare(root, configuration: configuration, logger: logger)
                let app = CatalogServer.makeApplication(root: root, configuration: configuration, logger: logger)
                try await app.test(.router, test)
            }
        }
    }

    /// Two cases create the same movie at once; each sees its own and no other.
    private func createAndList(on backend: Backend, case: Int, meeting: Rendezvous) async throws {
        try await withApp(on: backend) { client in
            let overlapped = await meeting.arrive()
            let created = try await client.execute(
                uri: "/movies",
                method: .post,
                body: json(#"{"title":"Up","year":2009,"director":"Pete Docter"}"#)
            ) { response in
                #expect(response.status == .created)
                return try response.decode(Movie.self)
            }
            try await client.execute(uri: "/movies", method: .get) { response in
                let page = try response.decode(MoviePage.self)
                #expect(page.total == 1)
                #expect(page.items == [created])
            }
            #expect(overlapped, "the two cases did not run at the same time")
        }
    }

    @Test(.scoped(database: .sqlite(migrations: SQLiteMovieRepository.migrations)), arguments: [1, 2])
    func onSQLiteEachTestSeesOnlyWhatItWrote(case: Int) async throws {
        try await createAndList(on: .sqlite, case: `case`, meeting: sqliteCases)
    }

    @Test(.enabled(if: PostgresTestServer.isEnabled), .scoped(database: SharedCatalogDatabase()), arguments: [1, 2])
    func onPostgreSQLEachTestSeesOnlyWhatItWrote(case: Int) async throws {
        try await createAndList(on: .postgres, case: `case`, meeting: postgresCases)
    }

    @Test(.enabled(if: PostgresTestServer.isEnabled))
    func onPostgreSQLNothingOutlivesTheTest() async throws {
        let url = try await SharedCatalogDatabase.shared()
        try await SharedCatalogDatabase()
            .withIsolation(for: "test") { isolate in
                try await withTestScope({ isolate(&$0) }) {
                    try await withApp(on: .postgres) { client in
                        try await client.execute(
                            uri: "/movies",
                            method: .post,
                            body: json(#"{"title":"Heat","year":1995,"director":"Michael Mann"}"#)
                        ) { #expect($0.status == .created) }
                    }
                }
            }
        let name = String(url.split(separator: "/").last?.split(separator: "?").first ?? "")
        #expect(try await PostgresTestServer.shared().psql("SELECT count(*) FROM movies", database: name) == "0")
        #expect(try await PostgresTestServer.shared().psql("SELECT count(*) FROM movie_changes", database: name) == "0")
    }
}
