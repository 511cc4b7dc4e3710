import Fluent
import FluentPostgresDriver
import Foundation
import NIOCore
import ScopedFluent
import ScopedTestSupport
import ScopedVapor
import Synchronization
import Testing
import Vapor

/// `request.db`, wrapped by `.scoped(…)`, on a real PostgreSQL server behind a live Vapor server.
@Suite(
    .serialized,
    .enabled(if: PostgresTestServer.isEnabled, Comment(rawValue: PostgresTestServer.unavailableReason ?? ""))
)
struct FluentTransactionTests {
    @Test func aRequestsQueriesShareOneTransactionCommittedBeforeItsResponse() async throws {
        try await withFluentApp(routes: { app, server, database in
            app.post("todos", ":title") { request async throws -> TransactionEcho in
                let title = try request.parameters.require("title")
                let first = try await request.db.transactionID()
                try await Todo(title: title).save(on: request.db)
                // Another `request.db`, from a child task: still the request's transaction.
                let second = try await Task { try await request.db.transactionID() }.value
                let outside = try await server.psql("SELECT count(*) FROM todos", database: database.name)
                let titles = try await Todo.query(on: request.db).all().map(\.title)
                return TransactionEcho(transactionIDs: [first, second], visibleOutside: Int(outside), titles: titles)
            }
        }) { (app: FluentApp) async throws in
            let response = try await app.post("/todos/first")
            #expect(response.status == .ok)
            let echo = try response.content.decode(TransactionEcho.self)
            #expect(echo.transactionIDs.count == 2 && echo.transactionIDs[0] == echo.transactionIDs[1])
            // Inside the request: its own row, and nothing of it outside yet.
            #expect(echo.titles == ["first"])
            #expect(echo.visibleOutside == 0)
            // Committed by the time the client has the response.
            #expect(try await app.committedTitles() == ["first"])
        }
    }

    @Test func workHandedOffForAfterTheCommitSeesTheRequestsRowsAndAfterARollbackNone() async throws {
        let seen = Mutex<[String]>([])
        try await withFluentApp(routes: { app, _, _ in
            app.post("todos", ":title") { request async throws -> HTTPStatus in
                let title = try request.parameters.require("title")
                try await Todo(title: title).save(on: request.db)
                let database = request.db
                // Each in a scope and a transaction of its own, once the request's has ended.
                handOff(.afterCommit, timeout: .seconds(10)) {
                    let titles = try await Todo.query(on: database).all().map(\.title)
                    seen.withLock { $0.append("after the commit of \(title): \(titles)") }
                }
                handOff(.afterRollback, timeout: .seconds(10)) {
                    let titles = try await Todo.query(on: database).all().map(\.title)
                    seen.withLock { $0.append("after the rollback of \(title): \(titles)") }
                }
                if request.query[String.self, at: "fail"] != nil { throw Abort(.conflict, reason: "refused") }
                return .created
            }
        }) { (app: FluentApp) async throws in
            #expect(try await app.post("/todos/kept").status == .created)
            _ = try await eventually { seen.withLock { $0.count } == 1 }
            #expect(try await app.post("/todos/refused?fail=1").status == .conflict)
            _ = try await eventually { seen.withLock { $0.count } == 2 }
            #expect(
                seen.withLock { $0 } == [
                    "after the commit of kept: [\"kept\"]", "after the rollback of refused: [\"kept\"]",
                ]
            )
        }
    }

    @Test func aRequestThatThrowsRollsBackWhatItWroteAndKeepsItsStatus() async throws {
        try await withFluentApp(routes: { app, _, _ in
            app.post("todos", ":title") { request async throws -> HTTPStatus in
                let title = try request.parameters.require("title")
                try await Todo(title: title).save(on: request.db)
                try await Todo(title: title + "-2").save(on: request.db)
                if request.query[String.self, at: "fail"] != nil { throw Abort(.conflict, reason: "refused") }
                return .created
            }
        }) { (app: FluentApp) async throws in
            #expect(try await app.post("/todos/refused?fail=1").status == .conflict)
            #expect(try await app.committedTitles().isEmpty)
            #expect(try await app.post("/todos/kept").status == .created)
            #expect(try await app.committedTitles() == ["kept", "kept-2"])
        }
    }

    @Test func aQueryThatFailedFailsTheRequestAndNothingCommitsEvenWhenTheHandlerCaughtIt() async throws {
        try await withFluentApp(routes: { app, _, _ in
            app.post("todos", ":title") { request async throws -> HTTPStatus in
                let title = try request.parameters.require("title")
                try await Todo(title: title).save(on: request.db)
                // The same title again: the unique constraint refuses it, and the handler goes on.
                _ = try? await Todo(title: title).save(on: request.db)
                return .created
            }
        }) { (app: FluentApp) async throws in
            let response = try await app.post("/todos/twice")
            #expect(response.status == .internalServerError)
            #expect(response.body.map { String(buffer: $0) }?.contains("rolled back, not committed") == true)
            #expect(try await app.committedTitles().isEmpty)
        }
    }

    @Test func aTransactionInsideARequestJoinsItsTransaction() async throws {
        try await withFluentApp(routes: { app, _, _ in
            app.post("todos", ":title") { request async throws -> TransactionEcho in
                let title = try request.parameters.require("title")
                let outer = try await request.db.transactionID()
                let inner = try await request.db.transaction { database in
                    try await Todo(title: title).save(on: database)
                    return try await database.transactionID()
                }
                if request.query[String.self, at: "fail"] != nil { throw Abort(.conflict) }
                return TransactionEcho(transactionIDs: [outer, inner], titles: [])
            }
        }) { (app: FluentApp) async throws in
            let response = try await app.post("/todos/joined")
            let echo = try response.content.decode(TransactionEcho.self)
            #expect(echo.transactionIDs[0] == echo.transactionIDs[1])
            // The closure's work rolls back with the request that failed after it.
            #expect(try await app.post("/todos/undone?fail=1").status == .conflict)
            #expect(try await app.committedTitles() == ["joined"])
        }
    }

    /// A query made on an event loop, outside the handler's task (a future's callback, as
    /// Fluent's eager loading and future-based code make them): no scope is current where it
    /// runs, and it still belongs to the request whose `request.db` it was made on.
    @Test func aQueryMadeOnTheEventLoopStaysInItsRequestsTransaction() async throws {
        try await withFluentApp(
            maxConnectionsPerEventLoop: 2,
            routes: { app, _, _ in
                app.post("futures", ":title") { request async throws -> String in
                    let database = request.db
                    try await Todo(title: try request.parameters.require("title")).create(on: database)
                    let count = try await request.eventLoop.flatSubmit { Todo.query(on: database).count() }.get()
                    return "\(count)"
                }
            }
        ) { (app: FluentApp) async throws in
            let response = try await app.post("/futures/chained")
            #expect(response.status == .ok)
            // On another connection the count would not see the request's uncommitted row.
            #expect(response.body.map { String(buffer: $0) } == "1")
            #expect(try await app.committedTitles() == ["chained"])
        }
    }

    @Test func outsideARequestScopeEachStatementCommitsOnItsOwn() async throws {
        try await withFluentApp(routes: { _, _, _ in
        }) { (app: FluentApp) async throws in
            try await Todo(title: "outside").save(on: app.app.db)
            #expect(try await app.committedTitles() == ["outside"])
            #expect(try await app.app.db.transaction { try await $0.transactionID() } > 0)
        }
    }

    @Test func everyRequestGivesItsConnectionBackWhateverItsOutcome() async throws {
        // One connection per event loop: a request that kept its connection would make every
        // later request on that loop wait out the pool's 10 s timeout and fail.
        try await withFluentApp(
            maxConnectionsPerEventLoop: 1,
            routes: { app, _, _ in
                app.post("todos", ":title") { request async throws -> HTTPStatus in
                    let title = try request.parameters.require("title")
                    try await Todo(title: title).save(on: request.db)
                    if title.hasPrefix("fail") { throw Abort(.conflict) }
                    if title.hasPrefix("twice") { _ = try? await Todo(title: title).save(on: request.db) }
                    return .created
                }
                app.post("nothing") { _ async throws -> HTTPStatus in .noContent }
            }
        ) { (app: FluentApp) async throws in
            let statuses = try await withThrowingTaskGroup(of: HTTPStatus.self) { group in
                for index in 0..<60 {
                    let path = ["/todos/ok-\(index)", "/todos/fail-\(index)", "/todos/twice-\(index)", "/nothing"]
                    group.addTask { try await app.post(path[index % 4]).status }
                }
                return try await group.reduce(into: [HTTPStatus]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == .created }.count == 15)
            #expect(statuses.filter { $0 == .conflict }.count == 15)
            #expect(statuses.filter { $0 == .internalServerError }.count == 15)
            #expect(statuses.filter { $0 == .noContent }.count == 15)
            #expect(try await app.committedTitles().count == 15)
            #expect(try await app.committedTitles().allSatisfy { $0.hasPrefix("ok-") })
        }
    }

    @Test func aQueryMadeAfterItsRequestEndedFailsAndLeasesNothing() async throws {
        let kept = AsyncStream<Result<Int, any Error>>.makeStream()
        try await withFluentApp(routes: { app, _, _ in
            app.post("leak") { request async throws -> HTTPStatus in
                _ = try await request.db.transactionID()
                let database = request.db
                // Kept past the request by an unstructured task.
                Task {
                    try? await Task.sleep(for: .milliseconds(300))
                    do {
                        kept.continuation.yield(.success(try await database.transactionID()))
                    } catch {
                        kept.continuation.yield(.failure(error))
                    }
                }
                return .accepted
            }
        }) { (app: FluentApp) async throws in
            #expect(try await app.post("/leak").status == .accepted)
            var results = kept.stream.makeAsyncIterator()
            let result = try #require(await results.next())
            #expect(throws: ScopedError.self) { try result.get() }
        }
    }

    @Test func aCommitThatDoesNotReturnFailsTheRequestAtItsTimeout() async throws {
        try await withFluentApp(
            commitTimeout: .milliseconds(500),
            routes: { app, server, database in
                // A deferred constraint trigger that sleeps: the commit takes 20 s.
                try await server.psql(
                    """
                    CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS
                      $$ BEGIN PERFORM pg_sleep(20); RETURN NULL; END $$;
                    CREATE CONSTRAINT TRIGGER slow AFTER INSERT ON todos DEFERRABLE INITIALLY DEFERRED
                      FOR EACH ROW EXECUTE FUNCTION slow_commit();
                    """,
                    database: database.name
                )
                app.post("todos", ":title") { request async throws -> HTTPStatus in
                    try await Todo(title: try request.parameters.require("title")).save(on: request.db)
                    return .created
                }
            }
        ) { (app: FluentApp) async throws in
            let clock = ContinuousClock()
            let start = clock.now
            let response = try await app.post("/todos/slow")
            // Answered at the 0.5 s timeout, long before the commit ends (a generous bound: 2.5 s
            // was passed once beside a build).
            #expect(clock.now - start < .seconds(15))
            #expect(response.status == .internalServerError)
            #expect(response.body.map { String(buffer: $0) }?.contains("fluentTransactions") == true)
        }
    }

    @Test func aReadOnlyScopesTransactionRefusesWrites() async throws {
        let refusal = Mutex<String?>(nil)
        try await withFluentApp(routes: { app, _, _ in
            app.post("todos", ":title") { request async throws -> [String] in
                let titles = try await Todo.query(on: request.db).all().map(\.title)
                do {
                    try await Todo(title: try request.parameters.require("title")).save(on: request.db)
                } catch {
                    refusal.withLock { $0 = String(reflecting: error) }
                    throw error
                }
                return titles
            }
        }) { (app: FluentApp) async throws in
            #expect(try await app.post("/todos/written").status == .ok)
            #expect(refusal.withLock { $0 } == nil)
            let refused = try await app.post("/todos/refused", headers: ["X-Read-Only": "1"])
            #expect(refused.status == .internalServerError)
            #expect(refusal.withLock { $0 }?.contains("cannot execute INSERT in a read-only transaction") == true)
            #expect(try await app.committedTitles() == ["written"])
        }
    }

    @Test func aClientThatGoesAwayMidResponseRollsBackAndTheConnectionComesBack() async throws {
        try await withFluentApp(routes: { app, _, _ in
            // Inserts a row, then streams lines until the client goes away, each read from the
            // request's transaction.
            app.get("export", ":title") { request async throws -> Response in
                try await Todo(title: try request.parameters.require("title")).save(on: request.db)
                return Response(
                    body: .init(scopedAsyncStream: { writer in
                        for line in 0... {
                            let count = try await Todo.query(on: request.db).count()
                            try await writer.write(.buffer(ByteBuffer(string: "line \(line): \(count)\n")))
                            try await Task.sleep(for: .milliseconds(5))
                        }
                    })
                )
            }
        }) { (app: FluentApp) async throws in
            let connection = try await RawHTTPConnection(port: app.port)
            let received = try await connection.exchange("GET /export/gone HTTP/1.1\r\nHost: test\r\n\r\n") {
                $0.contains("line 3: 1\n")
            }
            #expect(received.hasPrefix("HTTP/1.1 200 OK"))
            // Its transaction ended (no session of the database is left in one) without a commit.
            let idleInTransaction = """
                SELECT count(*) FROM pg_stat_activity
                WHERE datname = current_database() AND state LIKE 'idle in transaction%'
                """
            #expect(
                try await eventually {
                    try await app.server.psql(idleInTransaction, database: app.database.name) == "0"
                }
            )
            #expect(try await app.committedTitles().isEmpty)
        }
    }
}
