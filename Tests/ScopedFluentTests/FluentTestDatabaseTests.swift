import Fluent
import FluentPostgresDriver
import Foundation
import ScopedDatabase
import ScopedFluent
import ScopedTestSupport
import ScopedTesting
import ScopedVapor
import Testing
import Vapor
import VaporTesting

/// `.scoped(database: .fluent)`: a test's Fluent queries and requests in one transaction of the
/// test, rolled back when it ends, on a database that tests share.
@Suite(.enabled(if: PostgresTestServer.isEnabled, Comment(rawValue: PostgresTestServer.unavailableReason ?? "")))
struct FluentTestDatabaseTests {
    /// The database these tests share, as a suite's tests would share their team's test database.
    static let shared = Task { try await PostgresTestServer.shared().makeDatabase() }

    /// As the article shows it: migrated, seeded and asked through Vapor's test client, nothing
    /// of it ever committed.
    @Test(.scoped(database: .fluent))
    func aTestsMigrationsRowsAndRequestsStayInTheTestsTransaction() async throws {
        let database = try await Self.shared.value
        try await withMigratedTodoApp(on: database) { app in
            try await [Todo(title: "seeded-1"), Todo(title: "seeded-2")].create(on: app.db)
            try await app.testing()
                .test(.GET, "todos") { response in
                    #expect((try? response.content.decode([String].self)) == ["seeded-1", "seeded-2"])
                }
            try await app.testing().test(.POST, "todos/posted") { #expect($0.status == .created) }
            #expect(
                try await Todo.query(on: app.db).sort(\.$id).all().map(\.title) == ["seeded-1", "seeded-2", "posted"]
            )
            // Nothing of it outside the test's transaction, not even the table.
            #expect(try await Self.committedTables(in: database) == 0)
        }
    }

    @Test func aRequestCommitsOrRollsBackAsInProductionAndTheTestUndoesEverything() async throws {
        // A database of its own: the check of open transactions below counts the database's.
        let server = try await PostgresTestServer.shared()
        let database = try await server.makeDatabase()
        try await asATest {
            try await withMigratedTodoApp(on: database) { app in
                let tester = try app.testing()
                try await tester.test(.POST, "todos/kept") { #expect($0.status == .created) }
                // A request that throws is rolled back to its savepoint: the test keeps the rest.
                try await tester.test(.POST, "todos/refused?fail=1") { #expect($0.status == .conflict) }
                // A read-only request cannot write.
                try await tester.test(.POST, "todos/read-only", headers: ["X-Read-Only": "1"]) {
                    #expect($0.status == .internalServerError)
                }
                // A statement of the test's own that fails (a unique violation) leaves the test's
                // transaction usable, as it would leave the database in production.
                await #expect(throws: (any Error).self) { try await Todo(title: "kept").create(on: app.db) }
                try await Todo(title: "after").create(on: app.db)
                #expect(try await Todo.query(on: app.db).sort(\.$id).all().map(\.title) == ["kept", "after"])
            }
            // The application shut down inside the test: its connection went back rolled back.
            let idle = try await server.psql(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = '\(database.name)' AND xact_start IS NOT NULL",
                database: database.name
            )
            #expect(idle == "1")  // This psql's own session.
        }
        #expect(try await Self.committedTables(in: database) == 0)
    }

    @Test func twoTestsWritingTheSameRowsInParallelEachSeeOnlyTheirOwn() async throws {
        let database = try await Self.shared.value
        try await withThrowingTaskGroup(of: [String].self) { group in
            for test in ["first", "second"] {
                group.addTask {
                    try await asATest {
                        try await withMigratedTodoApp(on: database) { app in
                            try await Todo(title: "same").create(on: app.db)
                            try await app.testing().test(.POST, "todos/\(test)") { #expect($0.status == .created) }
                            return try await Todo.query(on: app.db).sort(\.$id).all().map(\.title)
                        }
                    }
                }
            }
            for try await titles in group {
                #expect(titles.count == 2 && titles[0] == "same" && ["first", "second"].contains(titles[1]))
            }
        }
        #expect(try await Self.committedTables(in: database) == 0)
    }

    /// A root built outside the test, as a suite builds one for all its tests, opens request
    /// scopes that do not carry the test's values: their transactions still belong to the test
    /// whose application they serve, and nothing of them is committed.
    @Test func requestsOnARootBuiltOutsideTheTestStayInTheTestsTransaction() async throws {
        let database = try await Self.shared.value
        let suiteRoot = ScopeRoot { _ in }
        try await asATest {
            try await withMigratedTodoApp(on: database, root: suiteRoot) { app in
                // The table exists only in the test's transaction: a request committing on a
                // connection of its own would not find it.
                try await app.testing().test(.POST, "todos/from-a-suite-root") { #expect($0.status == .created) }
                #expect(try await Todo.query(on: app.db).all().map(\.title) == ["from-a-suite-root"])
            }
        }
        #expect(try await Self.committedTables(in: database) == 0)
    }

    /// A request scope holds the test's connection until it ends: a query of the test's body
    /// made meanwhile waits for its turn, and fails with a clear error at the turn timeout
    /// instead of waiting for ever; the request still commits into the test once it ends.
    @Test func aQueryThatWaitsPastTheTurnTimeoutFailsAndTheRequestHoldingTheConnectionFinishes() async throws {
        let database = try await Self.shared.value
        let queried = Signal()
        let finish = Signal()
        try await FluentTestDatabase(turnTimeout: .milliseconds(300))
            .withIsolation(for: "test") { isolate in
                try await withTestScope(isolate) {
                    try await withMigratedTodoApp(on: database) { app in
                        app.post("slow", ":title") { request async throws -> HTTPStatus in
                            try await Todo(title: try request.parameters.require("title")).create(on: request.db)
                            queried.fire()
                            await finish.wait()
                            return .created
                        }
                        let tester = try app.testing()
                        async let slow: Void = {
                            _ = try await tester.test(.POST, "slow/held") { #expect($0.status == .created) }
                        }()
                        await queried.wait()
                        let error = await #expect(throws: DatabaseTimeoutError.self) {
                            try await Todo.query(on: app.db).count()
                        }
                        #expect(error?.operation == .lease)
                        finish.fire()
                        try await slow
                        #expect(try await Todo.query(on: app.db).all().map(\.title) == ["held"])
                    }
                }
            }
    }

    /// How many `todos` tables the database holds outside any test's transaction.
    static func committedTables(in database: PostgresTestServer.Database) async throws -> Int {
        let count = try await PostgresTestServer.shared()
            .psql("SELECT count(*) FROM pg_tables WHERE tablename = 'todos'", database: database.name)
        return try #require(Int(count))
    }
}

/// Runs `body` as the `.scoped(database: .fluent)` trait runs a test, so that what follows the
/// test's end can be checked.
func asATest<R: Sendable>(_ body: () async throws -> R) async throws -> R {
    try await FluentTestDatabase.fluent.withIsolation(for: "test") { isolate in
        try await withTestScope(isolate) { try await body() }
    }
}

/// A todo application as its tests configure it: `.scoped(.postgres(…))` on `database`,
/// migrated at start, every request in a scope of `root` (by default one built here), shut down
/// when `body` returns.
func withMigratedTodoApp<R: Sendable>(
    on database: PostgresTestServer.Database,
    root: ScopeRoot? = nil,
    _ body: (Application) async throws -> R
) async throws -> R {
    let app = try await Application.make(.testing)
    app.logger.logLevel = .critical
    do {
        app.databases.use(.scoped(try .postgres(url: database.url)), as: .psql)
        app.migrations.add(CreateTodos())
        try await app.autoMigrate()
        app.middleware.use(
            RequestScopeMiddleware(root: root ?? ScopeRoot { _ in }) { values, request in
                if request.headers.first(name: "X-Read-Only") != nil { values.transactionMode = .readOnly }
            }
        )
        app.get("todos") { request async throws -> [String] in
            try await Todo.query(on: request.db).sort(\.$id).all().map(\.title)
        }
        app.post("todos", ":title") { request async throws -> HTTPStatus in
            try await Todo(title: try request.parameters.require("title")).create(on: request.db)
            if request.query[String.self, at: "fail"] != nil { throw Abort(.conflict) }
            return .created
        }
        let result = try await body(app)
        try await app.asyncShutdown()
        return result
    } catch {
        try? await app.asyncShutdown()
        throw error
    }
}
