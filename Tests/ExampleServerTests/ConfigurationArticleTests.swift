import HTTPTypes
import Hummingbird
import Logging
import HummingbirdTesting
import MovieCatalog
import Scoped
import ScopedHummingbird
import ScopedInstrumentation
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
        let root = try ScopeRoot(variants: variants) { values in
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

    private func follow(
        _ configurations: AsyncStream<AppConfiguration>,
        from configuration: AppConfiguration,
        logger: Logger
    ) async throws -> ReloadableScopeRoot {
        // The roots of the example server: its database is an app service, built by validation.
        func makeRoot(_ configuration: AppConfiguration) throws -> ScopeRoot {
            try CatalogServer.makeRoot(configuration, base: ScopedValues(), instrumentation: ScopeInstrumentation())
        }
        // SNIPPET-BEGIN
        let reloadable = ReloadableScopeRoot(try makeRoot(configuration))
        try await reloadable.follow(configurations, makeRoot: makeRoot, shutdownTimeout: .seconds(10)) { outcome in
            switch outcome {
            case .success(let reload): logger.notice("Reloaded, generation \(reload.generation): \(reload.summary)")
            case .failure(let error): logger.error("Reload rejected; the current configuration keeps serving: \(error)")
            }
        }
        // SNIPPET-END
        return reloadable
    }

    @Test func aReloadRebuildsTheDatabaseOnlyWhenItsConfigurationChanged() async throws {
        let folder = try TemporaryFolder()
        var configuration = try await loadConfiguration(.development, folder: folder)
        configuration.metricsEnabled = false
        var moreReaders = configuration
        moreReaders.database.readers += 1
        var louder = moreReaders
        louder.logLevel = .debug
        var invalid = louder
        invalid.database.readers = 0
        let (configurations, continuation) = AsyncStream.makeStream(of: AppConfiguration.self)
        let capture = LogCapture()
        let following = Task {
            try await follow(configurations, from: configuration, logger: capture.logger(label: "reload"))
        }
        for next in [moreReaders, louder, invalid] { continuation.yield(next) }
        continuation.finish()
        let reloadable = try await following.value
        let messages = capture.lines.map(\.message)
        #expect(reloadable.generation == 3)
        #expect(messages.count == 3)
        #expect(messages.first == "Reloaded, generation 2: the replaced root had built no app service")
        #expect(messages.dropFirst().first == "Reloaded, generation 3: carried over: sqliteDatabase")
        #expect(messages.last?.hasPrefix("Reload rejected; the current configuration keeps serving:") == true)
        #expect(messages.last?.contains("readers") == true, "\(messages)")
        await reloadable.current.shutdown()
    }

    @Test func everySnippetOfTheArticleIsHere() throws {
        #expect(
            try ArticleSnippets.inArticle("Sources/Scoped/Scoped.docc/Configuration.md") == ArticleSnippets.marked()
        )
    }
}
