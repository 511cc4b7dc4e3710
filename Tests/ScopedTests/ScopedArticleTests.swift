@testable import Scoped
import ScopedTestSupport
import Testing

// The snippet of Scoped.md (the core's DocC landing page), verbatim between the markers, with
// stand-ins for the example's repository types.

protocol MovieRepository: Sendable {
    func title(of id: Int) -> String?
}

struct SQLiteMovieRepository: MovieRepository {
    func title(of id: Int) -> String? { id == 1 ? "Toy Story" : nil }
}

// SNIPPET-BEGIN
extension ScopedValues {
    @Entry var movieRepository: any MovieRepository = SQLiteMovieRepository()
}

struct MovieDetails {
    @Scoped(\.movieRepository) var movies
}
// SNIPPET-END

struct ScopedArticleTests {
    @Test func theLandingPagesDeclarationReadsItsDefault() {
        #expect(MovieDetails().movies.title(of: 1) == "Toy Story")
    }

    @Test func everySnippetOfTheArticleIsHere() throws {
        #expect(try ArticleSnippets.inArticle("Sources/Scoped/Scoped.docc/Scoped.md") == ArticleSnippets.marked())
    }
}
