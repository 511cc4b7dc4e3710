import Fluent
import FluentPostgresDriver
import Foundation
import NIOCore
import ScopedFluent
import ScopedTestSupport
import ScopedTesting
import ScopedVapor
import Testing
import Vapor
import VaporTestUtils
import VaporTesting

// The snippets of ScopedFluent.md and of `.scoped(_:commitTimeout:)`'s and
// `FluentTestDatabase`'s doc comments, verbatim between the markers, run on a live server and
// under Vapor's test client below.

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

/// The database the team's tests share: here, one of the throwaway test server's, made once.
func teamTestDatabase() async throws -> SQLPostgresConfiguration {
    let database = try await FluentArticleTests.teamDatabase.value
    return try SQLPostgresConfiguration(url: try #require(URL(string: database.url)))
}

// SNIPPET-BEGIN
func withTodoApp(_ test: (Application) async throws -> Void) async throws {
    let app = try await Application.make(.testing)
    do {
        configureTodos(app, root: ScopeRoot { _ in }, configuration: try await teamTestDatabase())
        app.migrations.add(CreateTodos())
        try await app.autoMigrate()
        try await test(app)
    } catch {
        try await app.asyncShutdown()
        throw error
    }
    try await app.asyncShutdown()
}
// SNIPPET-END

// SNIPPET-BEGIN
@Test(.scoped(database: .fluent))
func postingATodoStoresIt() async throws {
    try await withTodoApp { app in
        try await app.testing().test(.POST, "todos", beforeRequest: { try $0.content.encode(Todo(title: "milk")) })
        #expect(try await Todo.query(on: app.db).count() == 1)
    }
}
// SNIPPET-END

@Suite(
    .serialized,
    .enabled(if: PostgresTestServer.isEnabled, Comment(rawValue: PostgresTestServer.unavailableReason ?? ""))
)
struct FluentArticleTests {
    static let teamDatabase = Task { try await PostgresTestServer.shared().makeDatabase() }

    /// The article's test runs a second time, beside another, in the same database: each sees
    /// only its own row, and nothing of either is committed.
    @Test func theArticlesTestRunsBesideItselfAndLeavesNothing() async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<2 {
                group.addTask {
                    try await FluentTestDatabase.fluent.withIsolation(for: "article") { isolate in
                        try await withTestScope(isolate) { try await postingATodoStoresIt() }
                    }
                }
            }
            try await group.waitForAll()
        }
        let database = try await Self.teamDatabase.value
        let tables = try await PostgresTestServer.shared()
            .psql("SELECT count(*) FROM pg_tables WHERE tablename = 'todos'", database: database.name)
        #expect(tables == "0")
    }

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
