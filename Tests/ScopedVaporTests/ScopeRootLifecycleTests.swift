import Logging
import PostgresNIO
import Scoped
import ScopedReload
import ScopedPostgres
import ScopedSQLite
import ScopedServiceLifecycle
import ScopedTestSupport
import ScopedVapor
import ServiceLifecycle
import SessionTestSupport
import Testing
import Vapor
import VaporTesting

/// A Vapor application's root, with the life a swift-service-lifecycle application gives it:
/// running app services, validation before the port binds, shutdown after the server.
@Suite(.serialized)
struct ScopeRootLifecycleTests {
    struct Unbuildable: Error {}

    enum UnbuildableKey: ScopedServiceKey {
        static let lifetime = ScopedLifetime.app
        static func makeValue() async throws -> Int { throw Unbuildable() }
    }

    /// A new application in a testing environment whose `startup()` serves on a free port of
    /// 127.0.0.1 (Vapor's `.testing` would take its command from the test runner's arguments);
    /// the test shuts it down.
    private func makeApp() async throws -> Application {
        let app = try await Application.make(Environment(name: "testing", arguments: ["vapor", "serve"]))
        app.logger.logLevel = .critical
        app.http.server.configuration.hostname = "127.0.0.1"
        app.http.server.configuration.port = 0
        return app
    }

    @Test func aRootThatFailsValidationStopsTheBootBeforeThePortBinds() async throws {
        let root = ScopeRoot(services: [UnbuildableKey.self]) { _ in }
        try await withTestingApp { app in
            app.lifecycle.use(ScopeRootLifecycle(root: root))
            app.http.server.configuration.port = 0
            let error = await #expect(throws: ScopeValidationError.self) { try await app.startup() }
            #expect(error?.problems.map(\.entry) == ["unbuildable"])
            #expect(app.http.server.shared.localAddress == nil)
        }
    }

    @Test func theRootShutsDownWithTheApplication() async throws {
        let log = CloseLog()
        let root = ScopeRoot(services: [ClosingAppServiceKey.self]) { $0.closeLog = log }
        try await withTestingApp { app in
            app.lifecycle.use(ScopeRootLifecycle(root: root))
            try await app.asyncBoot()
            _ = try await root.withScope { try await ScopedValues.current.service(ClosingAppServiceKey.self) }
            #expect(log.all.isEmpty)
        }
        #expect(log.all == ["success"])
    }

    /// VaporTesting's `app.testing()` boots synchronously: the root still runs, and still shuts
    /// down with the application.
    @Test func anAppTestedWithVaporTestingRunsAndShutsDownItsRoot() async throws {
        let log = CloseLog()
        let root = ScopeRoot(services: [ClosingAppServiceKey.self]) { $0.closeLog = log }
        try await withTestingApp { app in
            app.lifecycle.use(ScopeRootLifecycle(root: root))
            app.middleware.use(RequestScopeMiddleware(root: root))
            app.get("ping") { _ async throws -> String in
                _ = try await ScopedValues.current.service(ClosingAppServiceKey.self)
                return "pong"
            }
            try await app.testing().test(.GET, "ping") { #expect($0.body.string == "pong") }
            #expect(log.all.isEmpty)
        }
        #expect(log.all == ["success"])
    }

    /// postgres-nio's client leases no connection before its `run()` has started: the lifecycle
    /// runs it, as `ScopeRootService` does in a Hummingbird application.
    @Test(.enabled(if: PostgresTestServer.isEnabled, "needs a PostgreSQL server"))
    func aVaporAppOnPostgreSQLRunsTheClientItsRequestsLeaseFrom() async throws {
        let server = try await PostgresTestServer.shared()
        let database = try await server.makeDatabase()
        var configuration = try PostgresConfiguration(
            url: database.url,
            migrations: [
                PostgresMigration(version: 1, name: "items", statements: ["CREATE TABLE items (name text NOT NULL)"])
            ]
        )
        // A client that does not run fails at this bound, not at the default's.
        configuration.leaseTimeout = .seconds(2)
        configuration.connectTimeout = .seconds(2)
        let root = ScopeRoot(services: [PostgresClientKey.self, PostgresDatabaseKey.self, PostgresSessionKey.self]) {
            [configuration] in $0.postgresConfiguration = configuration
        }
        let app = try await makeApp()
        app.lifecycle.use(ScopeRootLifecycle(root: root, logger: app.logger))
        app.middleware.use(RequestScopeMiddleware(root: root))
        app.post("items", ":name") { request async throws -> HTTPStatus in
            let name = try request.parameters.require("name")
            try await ScopedValues.current.postgresSession.execute("INSERT INTO items (name) VALUES (\(name))")
            return .created
        }
        do {
            try await app.startup()
            let port = try #require(app.http.server.shared.localAddress?.port)
            let response = try await app.client.post("http://127.0.0.1:\(port)/items/first")
            #expect(response.status == .created)
        } catch {
            try await app.asyncShutdown()
            throw error
        }
        try await app.asyncShutdown()
        #expect(try await server.psql("SELECT count(*) FROM items", database: database.name) == "1")
        // The root shut down with the application: its services are closed.
        await #expect(throws: ScopedError.self) {
            try await root.withScope { try await ScopedValues.current.postgresDatabase }
        }
    }

    /// At shutdown the server stops accepting and finishes its requests first; only then does
    /// the root shut down, so a request in flight commits and no request reaches a root that
    /// has shut down.
    @Test func shutdownStopsTheServerFinishesItsRequestsAndOnlyThenClosesTheRoot() async throws {
        let folder = try TemporaryFolder()
        let log = CloseLog()
        let path = folder.path("items.sqlite")
        let configuration = SQLiteConfiguration(
            path: path,
            migrations: [SQLiteMigration(version: 1, name: "items", statements: ["CREATE TABLE items (name TEXT)"])]
        )
        let root = ScopeRoot(services: [SQLiteDatabaseKey.self, SQLiteSessionKey.self, ClosingAppServiceKey.self]) {
            $0.sqliteConfiguration = configuration
            $0.closeLog = log
        }
        let entered = Signal()
        let release = Signal()
        let app = try await makeApp()
        app.lifecycle.use(ScopeRootLifecycle(root: root, logger: app.logger))
        app.middleware.use(RequestScopeMiddleware(root: root))
        app.post("items", ":name") { request async throws -> HTTPStatus in
            let name = try request.parameters.require("name")
            _ = try await ScopedValues.current.service(ClosingAppServiceKey.self)
            entered.fire()
            await release.wait()
            try await ScopedValues.current.sqliteSession.execute("INSERT INTO items (name) VALUES (\(name))")
            return .created
        }
        try await app.startup()
        let port = try #require(app.http.server.shared.localAddress?.port)
        // On a connection of its own, not the application's client, which the application's
        // shutdown also stops.
        let connection = try await RawHTTPConnection(port: port)
        let inFlight = Task {
            try await connection.exchange(
                "POST /items/in-flight HTTP/1.1\r\nHost: test\r\nContent-Length: 0\r\n\r\n",
                timeout: .seconds(30)
            )
        }
        await entered.wait()
        let shutdown = Task { try await app.asyncShutdown() }

        // The server stops accepting while the request is still in its handler.
        let refuses = await eventually {
            guard let probe = try? await RawHTTPConnection(port: port) else { return true }
            _ = try? await probe.exchange("", timeout: .milliseconds(20))
            return false
        }
        #expect(refuses, "the server still accepted connections while the root was shutting down")
        #expect(log.all.isEmpty, "the root closed its app services before the request in flight finished")

        release.fire()
        let response = try await inFlight.value
        #expect(response.hasPrefix("HTTP/1.1 201 Created"), "\(response)")
        try await shutdown.value
        #expect(log.all == ["success"])
        let committed = ScopeRoot(services: [SQLiteDatabaseKey.self, SQLiteSessionKey.self]) {
            $0.sqliteConfiguration = configuration
        }
        let names = try await committed.withScope {
            try await ScopedValues.current.sqliteSession.query("SELECT name FROM items")
                .map { try $0.get("name", as: String.self) }
        }
        await committed.shutdown()
        #expect(names == ["in-flight"])
    }

    /// Follows configuration snapshots with the root's service until the graceful shutdown.
    struct Follower: Service {
        let rootService: ScopeRootService
        let snapshots: AsyncStream<String>
        let makeRoot: @Sendable (String) -> ScopeRoot
        let reloaded: AsyncStream<Bool>.Continuation

        func run() async throws {
            try await cancelWhenGracefulShutdown {
                try await rootService.follow(snapshots, makeRoot: makeRoot) { reloaded.yield((try? $0.get()) != nil) }
            }
        }
    }

    /// A Vapor application reloads as a service-lifecycle one does: a new request reaches the
    /// new root while one in flight finishes on its own, which closes only after it.
    @Test(.timeLimit(.minutes(1))) func aReloadReachesNewRequestsWhileOneInFlightFinishesOnItsRoot() async throws {
        let log = CloseLog()
        let makeRoot: @Sendable (String) -> ScopeRoot = { tag in
            ScopeRoot(services: [ClosingAppServiceKey.self]) {
                $0.tag = tag
                $0.closeLog = log
            }
        }
        let snapshots = AsyncStream<String>.makeStream()
        let reloads = AsyncStream<Bool>.makeStream()
        let reloadable = ReloadableScopeRoot(makeRoot("v1"))
        let rootService = ScopeRootService(root: reloadable, logger: Logger(label: "test"))
        let follower = Follower(
            rootService: rootService,
            snapshots: snapshots.stream,
            makeRoot: makeRoot,
            reloaded: reloads.continuation
        )
        let entered = Signal()
        let release = Signal()
        let app = try await makeApp()
        app.lifecycle.use(ScopeRootLifecycle(service: rootService, services: [follower]))
        app.middleware.use(RequestScopeMiddleware(root: reloadable))
        app.get("tag") { request async throws -> String in
            _ = try await ScopedValues.current.service(ClosingAppServiceKey.self)
            if request.query[String.self, at: "hold"] != nil {
                entered.fire()
                await release.wait()
            }
            return ScopedValues.current.tag ?? "none"
        }
        try await app.startup()
        let port = try #require(app.http.server.shared.localAddress?.port)
        func get(_ target: String) async throws -> String {
            let connection = try await RawHTTPConnection(port: port)
            return try await connection.exchange("GET \(target) HTTP/1.1\r\nHost: test\r\n\r\n") {
                $0.hasSuffix("\r\n\r\nv1") || $0.hasSuffix("\r\n\r\nv2")
            }
        }
        let held = Task { try await get("/tag?hold=1") }
        await entered.wait()

        snapshots.continuation.yield("v2")
        var outcomes = reloads.stream.makeAsyncIterator()
        #expect(await outcomes.next() == true)
        #expect(try await get("/tag").hasSuffix("v2"))
        // The first root still serves the request in flight: its app service is open.
        #expect(log.all.isEmpty)

        release.fire()
        #expect(try await held.value.hasSuffix("v1"))
        #expect(await eventually { log.all == ["success"] }, "the replaced root did not close after its request")
        try await app.asyncShutdown()
        #expect(log.all == ["success", "success"])
    }
}
