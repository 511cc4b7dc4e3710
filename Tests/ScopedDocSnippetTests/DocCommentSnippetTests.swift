import ScopedTestSupport
import Testing

/// The examples in the core's doc comments are code that compiles: each one is marked, verbatim,
/// in a test file, as the articles' snippets are.
struct DocCommentSnippetTests {
    @Test func everySnippetInACoreDocCommentIsCompiledInATest() throws {
        let documented = try ArticleSnippets.inDocComments(under: "Sources/Scoped")
        let compiled = Set(try ArticleSnippets.markedInTests())
        #expect(documented.count > 20, "the doc comments' snippets were not found")
        let missing = documented.filter { !compiled.contains($0) }
        #expect(
            missing.isEmpty,
            "not compiled in any test, verbatim between SNIPPET markers:\n\(missing.joined(separator: "\n---\n"))"
        )
    }
}
