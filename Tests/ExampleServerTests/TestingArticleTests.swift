import Foundation
import XCTest

// The snippets of Testing.md (Scoped's DocC catalog), verbatim: they compile here, and run,
// and `testingArticleShowsTheseSnippets` checks that the article still shows them.

// SNIPPET-BEGIN
import MovieCatalog
import Scoped
import ScopedTesting
import Testing

@Suite(.scoped { $0.movieRepository = InMemoryMovieRepository() })
struct MovieRepositoryTests {
    @Test func startsEmpty() async throws {
        #expect(try await ScopedValues.current.movieRepository.movie(id: 1) == nil)
    }

    @Test(.scoped { $0.movieRepository = InMemoryMovieRepository.fixture() })
    func findsAMovie() async throws {
        let movie = try await ScopedValues.current.movieRepository.movie(id: 1)
        #expect(movie?.title == "Toy Story")
    }
}
// SNIPPET-END

final class MovieRepositoryXCTests: XCTestCase {
    // SNIPPET-BEGIN
    func testFindsAMovie() async throws {
        try await withTestScope({ $0.movieRepository = InMemoryMovieRepository.fixture() }) {
            let movie = try await ScopedValues.current.movieRepository.movie(id: 1)
            XCTAssertEqual(movie?.title, "Toy Story")
        }
    }
    // SNIPPET-END
}

import ScopedSQLite
import ScopedTestSupport

// SNIPPET-BEGIN
@Test(.scoped(database: .sqlite(migrations: SQLiteMovieRepository.migrations)))
func aCreatedMovieIsStored() async throws {
    let movies = SQLiteMovieRepository()
    let created = try await withScope {
        try await movies.create(MovieInput(title: "Up", year: 2009, director: "Pete Docter"))
    }
    #expect(try await withScope { try await movies.movie(id: created.id) } == created)
}
// SNIPPET-END

// SNIPPET-BEGIN
protocol Mailer: Sendable { func send(_ message: String) async }
actor SMTPMailer: Mailer { func send(_ message: String) async { /* talks to the mail server */  } }
actor RecordingMailer: Mailer {
    private(set) var sent: [String] = []
    func send(_ message: String) async { sent.append(message) }
}

enum MailerKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.app
    static func makeValue() async throws -> any Mailer { SMTPMailer() }
}

@Test(.scoped { $0.set(MailerKey.self, to: RecordingMailer()) })
func aWelcomeIsMailed() async throws {
    let mailer = try await ScopedValues.current.service(MailerKey.self)
    await mailer.send("Welcome")
    #expect(await (mailer as? RecordingMailer)?.sent == ["Welcome"])
}
// SNIPPET-END

@Test func testingArticleShowsTheseSnippets() throws {
    let article = try ArticleSnippets.inArticle("Sources/Scoped/Scoped.docc/Testing.md")
    let snippets = try ArticleSnippets.marked()
    #expect(snippets.count == 4)
    for snippet in snippets { #expect(article.contains(snippet), "\(snippet)") }

    // The entry with a test stand-in is the catalog's own declaration, only made `package` there.
    let entries = try String(
        contentsOf: ArticleSnippets.repositoryRoot(from: #filePath)
            .appending(path: "Sources/MovieCatalog/Catalog/CatalogEntries.swift"),
        encoding: .utf8
    )
    let entry = try #require(article.first { $0.contains("@Entry(testValue:") })
    let declaration = entry.split(separator: "\n").dropFirst().dropLast().joined(separator: "\n")
    #expect(entry.hasPrefix("extension ScopedValues {\n") && entry.hasSuffix("\n}"))
    #expect(entries.contains(declaration.replacingOccurrences(of: "    var ", with: "    package var ")))
}
