import MovieCatalog
import Scoped
import ScopedDiagnostics
import ScopedSQLite
import ScopedTestSupport
import Testing

// The snippet of ScopedDiagnostics' landing article (and of `DependencyGraphRecorder`'s and
// `DependencyGraph`'s doc comments), verbatim between the markers. What the graph holds is
// tested by `DependencyGraphTests` (the core's tests) and, served by the example, by
// `CatalogLiveTests`.

struct DiagnosticsArticleTests {
    /// Compiled, not run: it opens the default SQLite database.
    private func drawTheGraph() async {
        // SNIPPET-BEGIN
        let root = ScopeRoot(services: [SQLiteSessionKey.self], observers: [DependencyGraphRecorder()])
        _ = await root.validate()
        let graph = root.dependencyGraph()!
        print(graph.dot)  // dot -Tpng -o graph.png
        graph.dependents(of: "sqliteDatabase")  // ["sqliteSession"]
        // SNIPPET-END
    }

    private func selectingAVariant() throws -> ScopeRoot {
        // SNIPPET-BEGIN
        var variants = ScopedVariants()
        variants.register("sqlite", of: \.movieRepository) { SQLiteMovieRepository() }
        variants.register("fixture", of: \.movieRepository) { InMemoryMovieRepository.fixture() }
        let root = try ScopeRoot {
            $0.variants = variants
            try $0.selectVariant("sqlite", of: "movieRepository")
        }
        // SNIPPET-END
        return root
    }

    @Test func describeNamesTheVariantThatSetAnEntryAndWhereItWasSelected() async throws {
        let root = try selectingAVariant()
        let (atRoot, perRequest) = try await root.withScope {
            let atRoot = ScopedValues.current.describe()
            let perRequest = try await withScope({ try $0.selectVariant("fixture", of: "movieRepository") }) {
                ScopedValues.current.describe()
            }
            return (atRoot, perRequest)
        }
        let fromRoot = try #require(atRoot.entries.first { $0.name == "movieRepository" })
        #expect(fromRoot.origin == .configuration)
        #expect(fromRoot.variant == "sqlite")
        let fromRequest = try #require(perRequest.entries.first { $0.name == "movieRepository" })
        #expect(fromRequest.origin == .override(depth: 2))
        #expect(fromRequest.variant == "fixture")
        // The variants' own bookkeeping is not described as entries.
        #expect(!atRoot.entries.contains { $0.name == "variants" || $0.name == "selectedVariants" })
        await root.shutdown()
    }

    @Test func everySnippetOfTheArticleIsHere() throws {
        let article = try ArticleSnippets.inArticle(
            "Sources/ScopedDiagnostics/ScopedDiagnostics.docc/ScopedDiagnostics.md"
        )
        #expect(article == (try ArticleSnippets.marked()))
    }
}
