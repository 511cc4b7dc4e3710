import Foundation
import NIOCore
import Scoped
import ScopedSQLite
import ScopedTestSupport
import ScopedVapor
import Testing
import Vapor
import VaporTesting

// SNIPPET-BEGIN
func makeRoot(databasePath: String) -> ScopeRoot {
    ScopeRoot(services: [SQLiteDatabaseKey.self, SQLiteSessionKey.self]) {
        $0.sqliteConfiguration = SQLiteConfiguration(
            path: databasePath,
            migrations: [SQLiteMigration(version: 1, name: "notes", statements: ["CREATE TABLE notes (title TEXT)"])]
        )
    }
}
// SNIPPET-END

// SNIPPET-BEGIN
func configure(_ app: Application, root: ScopeRoot) {
    app.middleware.use(RequestScopeMiddleware(root: root))
    app.post("notes", ":title") { request async throws -> HTTPStatus in
        let title = try request.parameters.require("title")
        // The request's session: its transaction commits before the response is sent.
        try await ScopedValues.current.sqliteSession.execute("INSERT INTO notes (title) VALUES (\(title))")
        return .created
    }
    app.get("notes") { _ async throws -> Response in
        // Streamed from the request's transaction, which stays open until the last line.
        Response(
            body: .init(scopedAsyncStream: { writer in
                for row in try await ScopedValues.current.sqliteSession.query("SELECT title FROM notes ORDER BY title")
                {
                    try await writer.write(.buffer(ByteBuffer(string: try row.get("title", as: String.self) + "\n")))
                }
                try await writer.write(.end)
            })
        )
    }
}
// SNIPPET-END

/// ScopedVapor's article: its snippets are this file's, and they serve a real database.
struct VaporArticleTests {
    @Test func theArticlesApplicationCommitsEachRequestAndStreamsFromItsTransaction() async throws {
        let folder = try TemporaryFolder()
        let root = makeRoot(databasePath: folder.path("notes.sqlite"))
        #expect(await root.validate().isEmpty)
        try await withTestingApp { app in
            configure(app, root: root)
            let tester = try app.testing(method: .running(hostname: "127.0.0.1", port: 0))
            try await tester.test(.POST, "notes/milk") { #expect($0.status == .created) }
            try await tester.test(.POST, "notes/bread") { #expect($0.status == .created) }
            try await tester.test(.GET, "notes") { #expect($0.body.string == "bread\nmilk\n") }
        }
        #expect(root.openScopeCount == 0)
        await root.shutdown()
    }

    @Test func theArticleShowsThisFilesSnippets() throws {
        let article = try ArticleSnippets.inArticle("Sources/ScopedVapor/ScopedVapor.docc/ScopedVapor.md")
        #expect(article == (try ArticleSnippets.marked()))
    }
}
