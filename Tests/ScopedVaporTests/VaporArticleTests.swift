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

// SNIPPET-BEGIN
func serve(_ app: Application, root: ScopeRoot) async throws {
    app.lifecycle.use(ScopeRootLifecycle(root: root, logger: app.logger))
    configure(app, root: root)
    do {
        try await app.execute()
    } catch {
        try? await app.asyncShutdown()
        throw error
    }
    try await app.asyncShutdown()
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

    @Test func theArticlesServeFunctionRunsTheAppAndShutsTheRootDownWhenItStops() async throws {
        let folder = try TemporaryFolder()
        let root = makeRoot(databasePath: folder.path("notes.sqlite"))
        // Vapor's `.testing` would take its command from the test runner's arguments.
        let app = try await Application.make(Environment(name: "testing", arguments: ["vapor", "serve"]))
        app.logger.logLevel = .critical
        app.http.server.configuration.hostname = "127.0.0.1"
        app.http.server.configuration.port = 0
        let serving = Task { try await serve(app, root: root) }
        // `app.running` is set once the server listens; reading `app.http.server` before `serve`
        // registered its routes would make the server with none.
        #expect(await eventually(within: .seconds(30)) { app.running != nil })
        let port = try #require(app.http.server.shared.localAddress?.port)
        let created = try await app.client.post("http://127.0.0.1:\(port)/notes/tea")
        #expect(created.status == .created)
        app.running?.stop()
        try await serving.value
        // The application stopped and its root shut down with it: its services are closed.
        await #expect(throws: ScopedError.self) {
            try await root.withScope { try await ScopedValues.current.sqliteDatabase }
        }
    }

    @Test func theArticleShowsThisFilesSnippets() throws {
        let article = try ArticleSnippets.inArticle("Sources/ScopedVapor/ScopedVapor.docc/ScopedVapor.md")
        #expect(article == (try ArticleSnippets.marked()))
    }
}
