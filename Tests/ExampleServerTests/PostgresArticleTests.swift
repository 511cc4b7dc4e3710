import Hummingbird
import Logging
import MovieCatalog
import PostgresNIO
import Scoped
import ScopedHummingbird
import ScopedPostgres
import ScopedServiceLifecycle
import ScopedTestSupport
import Testing

// The snippets of PostgreSQLAndScalingOut.md (ScopedPostgres's DocC catalog), verbatim between
// the markers: they compile here, and `everySnippetOfTheArticleIsHere` checks that the article
// shows exactly these.

struct PostgresArticleTests {
    private func configuredRoot() throws -> (PostgresConfiguration, ScopeRoot) {
        // SNIPPET-BEGIN
        let configuration = try PostgresConfiguration(
            url: "postgres://catalog:secret@db.internal:5432/catalog",
            maximumConnections: 20,
            migrations: PostgresMovieRepository.migrations
        )
        let root = ScopeRoot(services: [PostgresClientKey.self, PostgresDatabaseKey.self, PostgresSessionKey.self]) {
            $0.postgresConfiguration = configuration
        }
        // SNIPPET-END
        return (configuration, root)
    }

    /// Compiled, not run: it serves until SIGTERM.
    private func serve(router: Router<BasicRequestContext>, root: ScopeRoot, logger: Logger) async throws {
        // SNIPPET-BEGIN
        var app = Application(router: router, logger: logger)
        app.addScopeRoot(ScopeRootService(root: root, logger: logger))  // validates: connects, migrates
        try await app.runService()  // until SIGTERM; requests drain, the root shuts down, the client stops
        // SNIPPET-END
    }

    private func read(id: Int) async throws -> [PostgresRow] {
        // SNIPPET-BEGIN
        let session = try await ScopedValues.current.postgresSession
        let rows = try await session.query("SELECT id, title FROM movies WHERE id = \(id)")
        // SNIPPET-END
        return rows
    }

    @Test func theConfigurationShowsItsURLWithoutThePassword() async throws {
        let (configuration, root) = try configuredRoot()
        #expect(configuration.description == "postgres://catalog:***@db.internal:5432/catalog")
        #expect(configuration.maximumConnections == 20)
        await root.shutdown()
    }

    @Test(.enabled(if: PostgresTestServer.isEnabled))
    func theSessionSnippetReadsAMovie() async throws {
        let url = try await PostgresTestServer.shared().makeDatabase().url
        let configuration = try PostgresConfiguration(url: url, migrations: PostgresMovieRepository.migrations)
        let root = ScopeRoot(services: [PostgresClientKey.self, PostgresDatabaseKey.self, PostgresSessionKey.self]) {
            $0.postgresConfiguration = configuration
        }
        try await root.withRunningServices(logger: Logger(label: "test")) {
            _ = try await root.withScope {
                try await ScopedValues.current.postgresSession.execute(
                    "INSERT INTO movies (title, year) VALUES ('Heat', 1995)"
                )
            }
            let rows = try await root.withScope { try await read(id: 1) }
            #expect(try rows.map { try $0.decode((Int, String).self) }.map(\.1) == ["Heat"])
        }
    }

    @Test func everySnippetOfTheArticleIsHere() throws {
        let article = try ArticleSnippets.inArticle(
            "Sources/ScopedPostgres/ScopedPostgres.docc/PostgreSQLAndScalingOut.md"
        )
        #expect(article == (try ArticleSnippets.marked()))
    }
}
