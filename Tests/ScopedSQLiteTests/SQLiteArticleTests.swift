import Foundation
import Scoped
import ScopedDatabase
import ScopedSQLite
import ScopedTestSupport
import Testing

// The snippets of SQLite.md (ScopedSQLite's DocC catalog), verbatim between the markers: they
// compile here, and run, and `everySnippetOfTheArticleIsHere` checks that the article shows
// exactly these.

private struct Movie: Decodable, Sendable {
    let id: Int
    let title: String
    let year: Int
}

/// What the article's last snippet calls: a catalog that reads through the session.
private struct Catalog {
    func movies(year: Int) async throws -> [Movie] {
        try await ScopedValues.current.sqliteSession.query("SELECT * FROM movies WHERE year = \(year)", as: Movie.self)
    }
}

struct SQLiteArticleTests {
    /// The article's root, whose relative path names a file under the working directory (the
    /// package's, where `data/` is ignored by git); removed before and after the test.
    private func configuredRoot() throws -> ScopeRoot {
        // SNIPPET-BEGIN
        let root = ScopeRoot(services: [SQLiteDatabaseKey.self, SQLiteSessionKey.self]) {
            $0.sqliteConfiguration = SQLiteConfiguration(
                path: "data/catalog.sqlite",
                readers: 4,
                synchronous: .full,
                migrations: [
                    SQLiteMigration(
                        version: 1,
                        name: "create movies",
                        statements: [
                            "CREATE TABLE movies (id INTEGER PRIMARY KEY, title TEXT NOT NULL, year INTEGER NOT NULL)"
                        ]
                    )
                ]
            )
        }
        // SNIPPET-END
        return root
    }

    private func insertAndRead(title: String, year: Int) async throws -> (Int64, [Movie]) {
        // SNIPPET-BEGIN
        let session = try await ScopedValues.current.sqliteSession
        let movies = try await session.query("SELECT * FROM movies WHERE year = \(year)", as: Movie.self)
        let id = try await session.insert("INSERT INTO movies (title, year) VALUES (\(title), \(year))")
        // SNIPPET-END
        return (id, movies)
    }

    private func readOnly(_ root: ScopeRoot, _ catalog: Catalog) async throws -> [Movie] {
        // SNIPPET-BEGIN
        try await root.withScope({ $0.transactionMode = .readOnly }) {
            try await catalog.movies(year: 1995)  // reads beside the writers
        }
        // SNIPPET-END
    }

    @Test func theArticlesSnippetsRunAsItSays() async throws {
        let files = ["", "-wal", "-shm"].map { "data/catalog.sqlite\($0)" }
        func removeFiles() { for file in files { try? FileManager.default.removeItem(atPath: file) } }
        removeFiles()
        defer { removeFiles() }
        let root = try configuredRoot()
        #expect(await root.validate().isEmpty)
        let (id, before) = try await root.withScope { try await insertAndRead(title: "Heat", year: 1995) }
        #expect(id == 1 && before.isEmpty)
        #expect(try await readOnly(root, Catalog()).map(\.title) == ["Heat"])
        await root.shutdown()
        #expect(FileManager.default.fileExists(atPath: "data/catalog.sqlite"))
    }

    @Test func everySnippetOfTheArticleIsHere() throws {
        let article = try ArticleSnippets.inArticle("Sources/ScopedSQLite/ScopedSQLite.docc/SQLite.md")
        #expect(article == (try ArticleSnippets.marked()))
    }
}
