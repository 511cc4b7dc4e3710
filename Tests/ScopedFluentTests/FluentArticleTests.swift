import Fluent
import FluentPostgresDriver
import Foundation
import NIOCore
import ScopedFluent
import ScopedTestSupport
import ScopedVapor
import Testing
import Vapor

// The snippets of ScopedFluent.md and of `.scoped(_:commitTimeout:)`'s doc comment, verbatim
// between the markers, run on a live server below.

// SNIPPET-BEGIN
func configureTodos(_ app: Application, root: ScopeRoot, configuration: SQLPostgresConfiguration) {
    app.databases.use(.scoped(.postgres(configuration: configuration)), as: .psql)
    app.middleware.use(RequestScopeMiddleware(root: root))
    app.post("todos") { request async throws -> Todo in
        let todo = try request.content.decode(Todo.self)
        try await todo.save(on: request.db)  // In the request's transaction.
        return todo
    }
}
// SNIPPET-END

// SNIPPET-BEGIN
struct TodoImport: Content {
    var titles: [String]
}

func configureImport(_ app: Application) {
    app.post("todos", "import") { request async throws -> HTTPStatus in
        let titles = try request.content.decode(TodoImport.self).titles
        for title in titles {
            // A title already there fails its query: the request answers 500, and none of
            // the titles is committed, even those saved before it.
            try await Todo(title: title).save(on: request.db)
        }
        return .created
    }
}
// SNIPPET-END

@Suite(
    .serialized,
    .enabled(if: PostgresTestServer.isEnabled, Comment(rawValue: PostgresTestServer.unavailableReason ?? ""))
)
struct FluentArticleTests {
    @Test func theArticlesApplicationCommitsAnImportWholeOrNotAtAll() async throws {
        let server = try await PostgresTestServer.shared()
        let database = try await server.makeDatabase()
        let app = try await Application.make(.testing)
        app.logger.logLevel = .critical
        do {
            let url = try #require(URL(string: database.url))
            configureTodos(app, root: ScopeRoot { _ in }, configuration: try SQLPostgresConfiguration(url: url))
            configureImport(app)
            app.migrations.add(CreateTodos())
            try await app.autoMigrate()
            try await app.server.start(address: .hostname("127.0.0.1", port: 0))
            let port = try #require(app.http.server.shared.localAddress?.port)
            let base = "http://127.0.0.1:\(port)/todos"
            let saved = try await app.client.post(URI(string: base)) { try $0.content.encode(Todo(title: "one")) }
            #expect(saved.status == .ok)
            #expect(try saved.content.decode(Todo.self).id != nil)
            let refused = try await app.client.post(URI(string: base + "/import")) {
                try $0.content.encode(TodoImport(titles: ["two", "three", "one"]))
            }
            #expect(refused.status == .internalServerError)
            let imported = try await app.client.post(URI(string: base + "/import")) {
                try $0.content.encode(TodoImport(titles: ["two", "three"]))
            }
            #expect(imported.status == .created)
            let titles = try await server.psql("SELECT title FROM todos ORDER BY id", database: database.name)
            #expect(titles.split(separator: "\n") == ["one", "two", "three"])
            await app.server.shutdown()
            try await app.asyncShutdown()
        } catch {
            await app.server.shutdown()
            try? await app.asyncShutdown()
            throw error
        }
    }

    @Test func theArticleShowsThisFilesSnippets() throws {
        let article = try ArticleSnippets.inArticle("Sources/ScopedFluent/ScopedFluent.docc/ScopedFluent.md")
        #expect(article == (try ArticleSnippets.marked()))
    }
}
