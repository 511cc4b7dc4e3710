import MovieCatalog
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import HummingbirdTesting
import Scoped
import ScopedDiagnostics
import ScopedPostgres
import ScopedSQLite
import ScopedTesting
import Testing

@testable import CatalogApp
import ScopedTestSupport

/// A repository that writes through SQLite and then fails, as a handler failing after its write.
struct FailingAfterWriteRepository: ForwardingRepository {
    struct Failure: Error {}
    let base: any MovieRepository = SQLiteMovieRepository()

    func create(_ input: MovieInput) async throws -> Movie {
        _ = try await base.create(input)
        throw Failure()
    }
    func addRating(movieID: Int, stars: Int) async throws -> Bool {
        _ = try await base.addRating(movieID: movieID, stars: stars)
        throw Failure()
    }
}

/// The real server on loopback, on a real SQLite file in a temporary folder.
struct CatalogLiveTests {
    private func titles(_ client: some TestClientProtocol, headers: HTTPFields = [:]) async throws -> [String] {
        try await client.execute(uri: "/movies?limit=500", method: .get, headers: headers) {
            (response: TestResponse) async throws in
            try response.decode(MoviePage.self).items.map(\.title)
        }
    }

    @Test(.scoped { $0.movieRepository = SQLiteMovieRepository() })
    func developmentSeedsAndServesTheCatalogFromSQLite() async throws {
        let folder = try TemporaryFolder()
        let (app, root) = try await makeApplication(try await loadConfiguration(.development, folder: folder))
        try await app.test(.live) { client in
            #expect(try await titles(client) == SampleCatalog.movies.map(\.title))
            let created = try await client.execute(
                uri: "/movies",
                method: .post,
                body: json(#"{"title":"Up","year":2009}"#)
            ) {
                (response: TestResponse) async throws in
                #expect(response.status == .created)
                return try response.decode(Movie.self)
            }
            try await client.execute(uri: "/movies/\(created.id)", method: .get) {
                (response: TestResponse) async throws in
                #expect(try response.decode(Movie.self) == created)
            }
        }
        await root.shutdown()
        // A 201 means committed: the row is in the file after the server stopped.
        let database = try await SQLiteDatabase.open(SQLiteConfiguration(path: folder.path("catalog.sqlite")))
        #expect(
            try await database.read { try $0.scalar("SELECT count(*) FROM movies WHERE title = \("Up")", as: Int.self) }
                == 1
        )
        await database.close()
    }

    @Test(.scoped { $0.movieRepository = SQLiteMovieRepository() })
    func developmentOverrideHeaderSelectsTheFixtureForThatRequestOnly() async throws {
        let folder = try TemporaryFolder()
        let (app, root) = try await makeApplication(try await loadConfiguration(.development, folder: folder))
        try await app.test(.live) { client in
            #expect(
                try await titles(client, headers: [.catalog: "fixture"]) == [
                    "Toy Story", "A Bug's Life", "Toy Story 2",
                ]
            )
            try await client.execute(uri: "/movies/2", method: .get, headers: [.catalog: "fixture"]) {
                (response: TestResponse) async throws in
                #expect(
                    try response.decode(Movie.self)
                        == Movie(id: 2, title: "A Bug's Life", year: 1998, director: "John Lasseter")
                )
            }
            #expect(try await titles(client) == SampleCatalog.movies.map(\.title))
            try await client.execute(uri: "/movies", method: .get, headers: [.catalog: "postgres"]) {
                (response: TestResponse) async throws in
                response.expectError(.badRequest, code: "invalid_override", field: "X-Catalog")
            }
        }
        await root.shutdown()
    }

    @Test(.scoped { $0.movieRepository = SQLiteMovieRepository() })
    func productionIgnoresTheOverrideHeaderAndServesNoDebugRoute() async throws {
        let folder = try TemporaryFolder()
        let (app, root) = try await makeApplication(try await loadConfiguration(.production, folder: folder))
        try await app.test(.live) { client in
            let created = try await client.execute(
                uri: "/movies",
                method: .post,
                body: json(#"{"title":"Heat","year":1995}"#)
            ) { $0.status }
            #expect(created == .created)
            // The fixture variant lists its own catalog; production must serve the database's.
            #expect(try await titles(client, headers: [.catalog: "fixture"]) == ["Heat"])
            for path in ["/debug/scope", "/debug/echo", "/debug/stats", "/debug/graph", "/debug/hanging-close"] {
                try await client.execute(uri: path, method: .get, headers: [.catalog: "fixture"]) {
                    (response: TestResponse) async throws in
                    response.expectError(.notFound, field: nil)
                }
            }
        }
        await root.shutdown()
    }

    @Test(.scoped { $0.movieRepository = SQLiteMovieRepository() })
    func debugScopeDescribesTheRequestScope() async throws {
        let folder = try TemporaryFolder()
        let (app, root) = try await makeApplication(try await loadConfiguration(.development, folder: folder))
        try await app.test(.live) { client in
            try await client.execute(
                uri: "/debug/scope",
                method: .get,
                headers: [.catalog: "fixture", .requestID: "debug-1"]
            ) {
                (response: TestResponse) async throws in
                #expect(response.status == .ok)
                let description = try response.decode(ScopeDescription.self)
                let entries = Dictionary(uniqueKeysWithValues: description.entries.map { ($0.name, $0) })
                #expect(description.depth == 1)
                #expect(entries["movieRepository"]?.variant == "fixture")
                #expect(entries["movieRepository"]?.origin == .override(depth: 1))
                #expect(entries["requestID"]?.origin == .override(depth: 1))
                #expect(entries["sqliteDatabase"]?.lifetime == .app)
                #expect(entries["sqliteSession"]?.lifetime == .scope)
            }
        }
        await root.shutdown()
    }

    @Test(arguments: Backend.available)
    func debugEchoReportsTheRequestsOwnValuesAndStatsCountWhatIsOpen(backend: Backend) async throws {
        let database = try await TestDatabase(backend)
        let configuration = try await loadConfiguration(
            .development,
            folder: database.folder,
            environment: database.environment
        )
        try await withCatalogServer(on: database) { client, _, _ in
            for (id, fixture) in [("echo-fixture", true), ("echo-\(backend)", false)] {
                var fields: HTTPFields = [.requestID: id]
                if fixture { fields[.catalog] = "fixture" }
                try await client.execute(uri: "/debug/echo", method: .get, headers: fields) {
                    (response: TestResponse) async throws in
                    let echo = try response.decode(ScopeEcho.self)
                    let expected = ScopeEcho.Reading(
                        requestID: id,
                        repository: fixture ? "InMemoryMovieRepository" : "\(type(of: backend.repository))"
                    )
                    #expect(
                        echo
                            == ScopeEcho(
                                handler: expected,
                                asyncLet: expected,
                                taskGroup: [expected, expected],
                                database: id,
                                afterDatabase: expected
                            )
                    )
                }
            }
            try await client.execute(uri: "/debug/stats", method: .get) { (response: TestResponse) async throws in
                let statistics = try response.decode(ServerStatistics.self)
                #expect(statistics.otherOpenScopes == 0)
                let connections =
                    backend == .sqlite
                    ? configuration.database.readers + 1 : configuration.postgres?.maximumConnections
                #expect(statistics.database?.connections == connections)
                #expect(statistics.database?.leased == 0)
            }
        }
    }

    @Test(.scoped { $0.movieRepository = FailingAfterWriteRepository() })
    func aRequestThatFailsAfterWritingIsRolledBack() async throws {
        let folder = try TemporaryFolder()
        let (app, root) = try await makeApplication(try await loadConfiguration(.test, folder: folder))
        try await app.test(.live) { client in
            // The mock would reach the handlers without a request scope too: this proves both
            // requests ran in one of the application's.
            try await expectRequestScopes(atLeast: 2) {
                try await client.execute(uri: "/movies", method: .post, body: json(#"{"title":"Up","year":2009}"#)) {
                    (response: TestResponse) async throws in
                    response.expectError(.internalServerError, code: "internal_error", field: nil)
                }
                try await client.execute(uri: "/movies", method: .get) { (response: TestResponse) async throws in
                    #expect(try response.decode(MoviePage.self).total == 0)
                }
            }
        }
        await root.shutdown()
        let database = try await SQLiteDatabase.open(SQLiteConfiguration(path: folder.path("catalog.sqlite")))
        #expect(try await database.read { try $0.scalar("SELECT count(*) FROM movies", as: Int.self) } == 0)
        await database.close()
    }

    @Test(.scoped { $0.movieRepository = SQLiteMovieRepository() })
    func debugGraphShowsTheServicesValidationBuiltInEachFormat() async throws {
        let folder = try TemporaryFolder()
        let (app, root) = try await makeApplication(try await loadConfiguration(.development, folder: folder))
        let (session, database) = (SQLiteSessionKey.name, SQLiteDatabaseKey.name)
        try await app.test(.router) { client in
            try await client.execute(uri: "/debug/graph", method: .get) { response in
                let graph = try response.decode(DependencyGraph.self)
                #expect(graph.edges == [DependencyGraph.Edge(from: session, to: database)])
                #expect(graph.services.map(\.lifetime) == graph.services.map { $0.name == database ? .app : .scope })
            }
            try await client.execute(uri: "/debug/graph?format=dot", method: .get) { response in
                #expect(response.headers[.contentType] == "text/vnd.graphviz; charset=utf-8")
                #expect(String(buffer: response.body).contains(#""\#(session)" -> "\#(database)";"#))
            }
            try await client.execute(uri: "/debug/graph?format=mermaid", method: .get) { response in
                #expect(String(buffer: response.body).hasPrefix("flowchart LR\n"))
                #expect(String(buffer: response.body).contains(" --> "))
            }
            try await client.execute(uri: "/debug/graph?format=svg", method: .get) { response in
                #expect(response.headers[.contentType] == "image/svg+xml")
                #expect(String(buffer: response.body).hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\""))
                #expect(String(buffer: response.body).contains(">\(session)</text>"))
            }
            try await client.execute(uri: "/debug/graph?format=png", method: .get) { response in
                response.expectError(.badRequest, code: "invalid_query", field: "format")
            }
        }
        await root.shutdown()
    }

    @Test func startUpLogsEachAppServicesBuildTimeOnceAtNotice() async throws {
        let folder = try TemporaryFolder()
        let capture = LogCapture()
        let (_, root) = try await makeApplication(
            try await loadConfiguration(.development, folder: folder),
            logger: capture.logger(label: "server"),
            base: productionValues()
        )
        let lines = capture.lines.filter { $0.message.hasPrefix("Built app service ") }
        #expect(lines.map { $0.message.split(separator: " ")[3] } == [Substring(SQLiteDatabaseKey.name)])
        // With what it read while built: what a reload compares.
        #expect(lines.allSatisfy { $0.level == .notice && $0.message.hasSuffix(" ms from sqliteConfiguration") })
        await root.shutdown()
    }
}
