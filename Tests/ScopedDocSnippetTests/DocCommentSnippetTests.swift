import Foundation
import ScopedTestSupport
import Testing

/// The examples in doc comments are code that compiles.
///
/// Each one is marked, verbatim, in a test file, as the articles' snippets are. A `…` in an
/// example stands for code the example leaves out (a test's body); the marked code may have
/// anything there.
struct DocCommentSnippetTests {
    /// The modules whose doc comments are checked: every library product's.
    static let modules = [
        "Scoped", "ScopedInstrumentation", "ScopedDiagnostics", "ScopedReload", "ScopedTenants", "ScopedDatabase",
        "ScopedSQLite",
        "ScopedPostgres",
        "ScopedServiceLifecycle",
        "ScopedTesting",
        "ScopedHummingbird", "ScopedHummingbirdWebSocket", "ScopedVapor", "ScopedFluent", "ScopedOpenAPI", "ScopedGRPC",
    ]

    /// Every marked piece of every test file, read once for all the modules.
    static let compiled = Result { try ArticleSnippets.markedInTests() }

    @Test(arguments: modules)
    func everySnippetInADocCommentIsCompiledInATest(module: String) throws {
        let documented = try ArticleSnippets.inDocComments(under: "Sources/\(module)")
        let compiled = try Self.compiled.get()
        #expect(!documented.isEmpty, "no snippet was found in \(module)'s doc comments")
        let missing = documented.filter { snippet in !compiled.contains { Self.shows($0, snippet) } }
        #expect(
            missing.isEmpty,
            "not compiled in any test, verbatim between SNIPPET markers:\n\(missing.joined(separator: "\n---\n"))"
        )
    }

    @Test func anElisionStandsForAnyCodeButTheRestMustMatch() {
        #expect(Self.shows("func f() {\n    work()\n}", "func f() { … }"))
        #expect(!Self.shows("func g() {\n    work()\n}", "func f() { … }"))
        #expect(Self.shows("a\nb", "a\nb"))
        #expect(!Self.shows("a\nb\nc", "a\nb"))
    }

    /// Whether `code` is what `snippet` shows: the same text, where each `…` of the snippet, with
    /// the spaces around it, stands for any text.
    static func shows(_ code: String, _ snippet: String) -> Bool {
        let pieces = snippet.components(separatedBy: "…")
        let parts = pieces.enumerated()
            .map { index, piece in
                var part = Substring(piece)
                if index > 0 { part = part.drop { $0 == " " } }
                if index < pieces.count - 1 {
                    while part.last == " " { part = part.dropLast() }
                }
                return String(part)
            }
        guard parts.count > 1 else { return code == snippet }
        guard code.hasPrefix(parts[0]), code.hasSuffix(parts[parts.count - 1]) else { return false }
        var rest = code.dropFirst(parts[0].count).dropLast(parts[parts.count - 1].count)
        for middle in parts.dropFirst().dropLast() {
            guard let found = rest.range(of: middle) else { return false }
            rest = rest[found.upperBound...]
        }
        return true
    }
}
