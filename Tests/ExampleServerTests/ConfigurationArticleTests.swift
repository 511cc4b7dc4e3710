import HTTPTypes
import Hummingbird
import Logging
import HummingbirdTesting
import MovieCatalog
import Scoped
import ScopedDiagnostics
import ScopedHummingbird
import ScopedSQLite
import ScopedTestSupport
import Testing

@testable import CatalogApp

// The snippets of Configuration.md (Scoped's DocC catalog), verbatim between the markers: they
// compile here, and run on the development profile, whose override rule the article shows.

struct ConfigurationArticleTests {
    private func variantsAndRoot(_ configuration: AppConfiguration) throws -> ScopeRoot {
        // SNIPPET-BEGIN
        var variants = ScopedVariants()
        variants.register("sqlite", of: \.movieRepository) { SQLiteMovieRepository() }
        variants.register("fixture", of: \.movieRepository) { InMemoryMovieRepository.fixture() }
        // SNIPPET-END
        // SNIPPET-BEGIN
        let root = try ScopeRoot { values in
            values.variants = variants
            values.sqliteConfiguration = configuration.database
            try values.selectVariant(configuration.repositoryVariant, of: "movieRepository")
        }
        // SNIPPET-END
        return root
    }

    private func middleware(
        root: ScopeRoot,
        rule: AppConfiguration.OverrideRule,
        catalogHeader: HTTPField.Name
    ) -> RequestScopeMiddleware<BasicRequestContext> {
        // SNIPPET-BEGIN
        RequestScopeMiddleware(root: root) { values, request, _ in
            guard let variant = request.headers[catalogHeader] else { return }
            guard rule.variants.contains(variant) else {
                throw APIError.badRequest("X-Catalog must be one of: \(rule.variants)", field: "X-Catalog")
            }
            try values.selectVariant(variant, of: rule.entry)
        }
        // SNIPPET-END
    }

    @Test func aRequestThatNamesAVariantGetsItAndOnlyThatRequest() async throws {
        let folder = try TemporaryFolder()
        var configuration = try await loadConfiguration(.development, folder: folder)
        configuration.repositoryVariant = "sqlite"
        let rule = try #require(configuration.overrideRule)
        let root = try variantsAndRoot(configuration)
        let router = Router()
        router.add(middleware: middleware(root: root, rule: rule, catalogHeader: rule.headerName))
        router.get("/first") { _, _ in
            try await ScopedValues.current.movieRepository.movie(id: 1)?.title ?? "none"
        }
        let app = Application(router: router)
        try await app.test(.router) { client in
            try await client.execute(uri: "/first", method: .get, headers: [rule.headerName: "fixture"]) {
                #expect(String(buffer: $0.body) == "Toy Story")
            }
            try await client.execute(uri: "/first", method: .get, headers: [rule.headerName: "nonsense"]) {
                #expect($0.status == .badRequest)
            }
            // Without the header: the root's SQLite repository, on an empty database.
            try await client.execute(uri: "/first", method: .get) { #expect(String(buffer: $0.body) == "none") }
        }
        await root.shutdown()
    }

    @Test func everySnippetOfTheArticleIsHere() throws {
        #expect(
            try ArticleSnippets.inArticle("Sources/Scoped/Scoped.docc/Configuration.md") == ArticleSnippets.marked()
        )
    }
}
