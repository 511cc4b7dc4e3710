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

    @Test func everySnippetOfTheArticleIsHere() throws {
        let article = try ArticleSnippets.inArticle(
            "Sources/ScopedDiagnostics/ScopedDiagnostics.docc/ScopedDiagnostics.md"
        )
        #expect(article == (try ArticleSnippets.marked()))
    }
}
