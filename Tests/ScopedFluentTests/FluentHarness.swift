import Fluent
import FluentPostgresDriver
import Foundation
import NIOCore
import ScopedDatabase
import ScopedFluent
import ScopedTestSupport
import ScopedVapor
import Testing
import Vapor

/// A row of the test's `todos` table; its title is unique.
final class Todo: Model, Content, @unchecked Sendable {
    static let schema = "todos"

    @ID(custom: "id", generatedBy: .database) var id: Int?
    @Field(key: "title") var title: String

    init() {}

    init(title: String) { self.title = title }
}

struct CreateTodos: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(Todo.schema)
            .field("id", .int, .identifier(auto: true))
            .field("title", .string, .required)
            .unique(on: "title")
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(Todo.schema).delete()
    }
}

/// A Vapor application on a new database of the test server, its Fluent database wrapped by
/// `.scoped(…)`, every request in a scope, serving on a free loopback port.
struct FluentApp {
    let app: Application
    let port: Int
    let server: PostgresTestServer
    let database: PostgresTestServer.Database

    /// The titles committed, read by `psql` from outside the application.
    func committedTitles() async throws -> [String] {
        try await server.psql("SELECT title FROM todos ORDER BY id", database: database.name)
            .split(separator: "\n").map(String.init)
    }

    func post(_ path: String, headers: HTTPHeaders = [:]) async throws -> ClientResponse {
        try await app.client.post(URI(string: "http://127.0.0.1:\(port)\(path)"), headers: headers)
    }

    func get(_ path: String) async throws -> ClientResponse {
        try await app.client.get(URI(string: "http://127.0.0.1:\(port)\(path)"))
    }
}

func withFluentApp<R: Sendable>(
    commitTimeout: Duration = .seconds(5),
    maxConnectionsPerEventLoop: Int = 1,
    routes: (Application, PostgresTestServer, PostgresTestServer.Database) async throws -> Void,
    _ body: (FluentApp) async throws -> R
) async throws -> R {
    let server = try await PostgresTestServer.shared()
    let database = try await server.makeDatabase()
    let app = try await Application.make(.testing)
    app.logger.logLevel = .critical
    // The test's client waits for one of its connections as long as the server may take: 60
    // requests queued for its 8 (over 2 database connections) waited more than the default 10 s
    // beside a build (`getConnectionFromPoolTimeout`), as the Vapor harness's did. A connection
    // a request keeps is still found: the server's own pool timeout answers 500.
    app.http.client.configuration.timeout.connect = .seconds(60)
    do {
        app.databases.use(
            .scoped(
                try .postgres(url: database.url, maxConnectionsPerEventLoop: maxConnectionsPerEventLoop),
                commitTimeout: commitTimeout
            ),
            as: .psql
        )
        app.migrations.add(CreateTodos())
        // Outside any request scope: each statement on its own, as without the wrapper.
        try await app.autoMigrate()
        app.middleware.use(
            RequestScopeMiddleware(root: ScopeRoot { _ in }) { values, request in
                if request.headers.first(name: "X-Read-Only") != nil { values.transactionMode = .readOnly }
            }
        )
        try await routes(app, server, database)
        try await app.server.start(address: .hostname("127.0.0.1", port: 0))
        let port = try #require(app.http.server.shared.localAddress?.port)
        let result = try await body(FluentApp(app: app, port: port, server: server, database: database))
        await app.server.shutdown()
        try await app.asyncShutdown()
        return result
    } catch {
        await app.server.shutdown()
        try? await app.asyncShutdown()
        throw error
    }
}

/// What a test route answers: the transaction IDs its queries saw, and what it read.
struct TransactionEcho: Content {
    var transactionIDs: [Int]
    var visibleOutside: Int?
    var titles: [String]
}

extension Database {
    /// The ID of the transaction this database's next query runs in (`txid_current()`).
    func transactionID() async throws -> Int {
        let sql = try #require(self as? any SQLDatabase)
        let row = try #require(try await sql.raw("SELECT txid_current()::bigint AS id").first())
        return try row.decode(column: "id", as: Int.self)
    }
}
