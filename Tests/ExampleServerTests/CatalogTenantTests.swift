import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import HummingbirdWSClient
import HummingbirdWSTesting
import InMemoryTracing
import MovieCatalog
import Scoped
import ScopedSQLite
import ScopedTenants
import ScopedTestSupport
import ScopedTesting
import Synchronization
import Testing
import Tracing

@testable import CatalogApp

/// The `multitenant` profile, live on loopback: each tenant's catalog in a SQLite file of its
/// own under `TENANTS_DIRECTORY`.
@Suite(.scoped { $0.movieRepository = SQLiteMovieRepository() })
struct CatalogTenantTests {
    /// The profile with its tenants in `folder`, and `environment` over it.
    private func configuration(
        _ folder: TemporaryFolder,
        profile: AppConfiguration.Profile = .multitenant,
        environment: [String: String] = [:]
    ) async throws -> AppConfiguration {
        try await loadConfiguration(
            profile,
            folder: folder,
            environment: ["TENANTS_DIRECTORY": folder.path("tenants")].merging(environment) { $1 }
        )
    }

    private func tenantHeaders(_ tenant: String) -> HTTPFields { [TenantHeader.name: tenant] }

    private func titles(_ client: some TestClientProtocol, tenant: String) async throws -> [String] {
        try await client.execute(uri: "/movies?limit=500", method: .get, headers: tenantHeaders(tenant)) {
            (response: TestResponse) async throws in
            #expect(response.status == .ok, "\(tenant): \(String(buffer: response.body))")
            return try response.decode(MoviePage.self).items.map(\.title)
        }
    }

    /// Creates a movie as `tenant`; returns the status.
    @discardableResult
    private func create(_ client: some TestClientProtocol, _ title: String, tenant: String) async throws -> TestResponse
    {
        try await client.execute(
            uri: "/movies",
            method: .post,
            headers: tenantHeaders(tenant),
            body: json(#"{"title":"\#(title)","year":2001}"#)
        ) { $0 }
    }

    private func statistics(_ client: some TestClientProtocol) async throws -> ServerStatistics {
        try await client.execute(uri: "/debug/stats", method: .get) { try $0.decode(ServerStatistics.self) }
    }

    @Test func aTenantRouteNeedsAValidTenantAndTheOthersNeedNone() async throws {
        let folder = try TemporaryFolder()
        let (app, root) = try await makeApplication(try await configuration(folder))
        try await app.test(.live) { client async throws in
            try await client.execute(uri: "/movies", method: .get) { response in
                response.expectError(.badRequest, code: "tenant_required", field: "X-Tenant")
            }
            for invalid in ["Acme", "a_b", "../etc", String(repeating: "a", count: 64)] {
                try await client.execute(uri: "/movies", method: .get, headers: tenantHeaders(invalid)) { response in
                    response.expectError(.badRequest, code: "invalid_tenant", field: "X-Tenant")
                }
            }
            for path in ["/health", "/metrics", "/openapi.json"] {
                try await client.execute(uri: path, method: .get) { #expect($0.status == .ok, "\(path)") }
            }
            let stats = try await statistics(client)
            #expect(stats.tenants == TenantStatistics(open: 0, evicted: 0))
            #expect(stats.database == nil)
            #expect(try await titles(client, tenant: "acme") == [])
            let acme = try await client.execute(uri: "/debug/stats", method: .get, headers: tenantHeaders("acme")) {
                try $0.decode(ServerStatistics.self)
            }
            #expect(acme.tenants == TenantStatistics(open: 1, evicted: 0))
            #expect(acme.database?.connections != nil)
            // The root's tenant metrics, with no tenant label.
            let metrics = try await client.execute(uri: "/metrics", method: .get) { String(buffer: $0.body) }
            let tenantLines = metrics.split(separator: "\n").filter { $0.hasPrefix("scoped_tenants_open") }
            #expect(!tenantLines.isEmpty)
            #expect(tenantLines.allSatisfy { !$0.contains("tenant=") && !$0.contains("acme") })
        }
        await root.shutdown()
    }

    @Test func theABACSequenceKeepsEachTenantsCatalogInItsOwnFile() async throws {
        let folder = try TemporaryFolder()
        let (app, root) = try await makeApplication(try await configuration(folder))
        try await app.test(.live) { client async throws in
            #expect(try await create(client, "Alpha", tenant: "a").status == .created)
            #expect(try await titles(client, tenant: "b") == [])
            #expect(try await create(client, "Beta", tenant: "b").status == .created)
            #expect(try await titles(client, tenant: "a") == ["Alpha"])
            #expect(try await titles(client, tenant: "c") == [])
            #expect(try await titles(client, tenant: "b") == ["Beta"])
        }
        await root.shutdown()
        // The rows are in the tenants' own files, and nowhere else.
        for (tenant, expected) in [("a", ["Alpha"]), ("b", ["Beta"]), ("c", [])] {
            let database = try await SQLiteDatabase.open(
                SQLiteConfiguration(path: folder.path("tenants/\(tenant).sqlite"))
            )
            let rows = try await database.read { transaction in
                try transaction.query("SELECT title FROM movies ORDER BY id")
                    .map { try $0.get("title", as: String.self) }
            }
            #expect(rows == expected, "\(tenant)")
            await database.close()
        }
        #expect(!FileManager.default.fileExists(atPath: folder.path("catalog.sqlite")))
    }

    @Test(.enabled(if: Backend.available.contains(.postgres)))
    func onPostgreSQLEachTenantKeepsItsCatalogInASchemaOfItsOwn() async throws {
        let database = try await TestDatabase(.postgres)
        let written = Locked<[String: Int]>([:])
        try await withCatalogServer(on: database, profile: .multitenant) { client, root, _ in
            #expect(try await create(client, "Alpha", tenant: "a").status == .created)
            #expect(try await titles(client, tenant: "b") == [])
            #expect(try await create(client, "Beta", tenant: "b").status == .created)
            #expect(try await titles(client, tenant: "a") == ["Alpha"])
            #expect(try await titles(client, tenant: "c") == [])
            #expect(try await titles(client, tenant: "b") == ["Beta"])
            // 256 writes over 50 tenants, each title tagged with its tenant. The live test client
            // sends every request on one connection, which the server answers in order, and gives
            // each 20 s from when it is queued: 16 workers queued 16 requests at once, and beside
            // a build the last of them (behind tenants opening their schemas) waited past 20 s.
            // Four keep the queue short; the server sees the same requests.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for worker in 0..<4 {
                    group.addTask {
                        for request in 0..<64 {
                            let tenant = "p\((worker * 31 + request * 7) % 50)"
                            let response = try await create(client, "\(tenant) \(worker)-\(request)", tenant: tenant)
                            #expect(response.status == .created)
                            if response.status == .created { written.withLock { $0[tenant, default: 0] += 1 } }
                            let seen = try await titles(client, tenant: tenant)
                            #expect(seen.allSatisfy { $0.hasPrefix("\(tenant) ") }, "\(tenant) saw \(seen)")
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(written.withLock(\.count) == 50, "every tenant wrote")
            #expect(await eventually { root.openScopeCount == 0 })
        }
        // Each tenant's rows are in its schema; the application's own tables hold none.
        #expect(try await database.integer(#"SELECT count(*) FROM "t_a".movies"#) == 1)
        #expect(try await database.integer(#"SELECT count(*) FROM "t_b".movies"#) == 1)
        #expect(try await database.integer(#"SELECT count(*) FROM "t_c".movies"#) == 0)
        for (tenant, count) in written.withLock({ $0 }) {
            #expect(try await database.integer(#"SELECT count(*) FROM "t_\#(tenant)".movies"#) == count)
            #expect(
                try await database.integer(
                    #"SELECT count(*) FROM "t_\#(tenant)".movies WHERE title NOT LIKE '\#(tenant) %'"#
                ) == 0
            )
        }
        #expect(
            try await database.integer(
                "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public' AND table_name = 'movies'"
            ) == 0
        )
    }

    @Test func eachRequestsSpanNamesItsTenant() async throws {
        let folder = try TemporaryFolder()
        let tracer = InMemoryTracer()
        try await withTracer(tracer) {
            let (app, root) = try await makeApplication(try await configuration(folder))
            tracer.clearAll()
            try await app.test(.router) { client in
                _ = try await titles(client, tenant: "acme")
                _ = try await titles(client, tenant: "beta")
            }
            await root.shutdown()
        }
        let requests = tracer.finishedSpans.filter { $0.kind == .server }
        #expect(
            requests.map { $0.attributes.get("http.request.header.x_tenant")?.toSpanAttribute() }
                == [.string("acme"), .string("beta")]
        )
    }

    @Test func sixteenClientsAcrossFiftyTenantsSeeOnlyTheirOwnRows() async throws {
        let folder = try TemporaryFolder()
        let (app, root) = try await makeApplication(try await configuration(folder))
        let acknowledged = Locked<[String: [String]]>([:])
        try await app.test(.live) { client async throws in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for worker in 0..<16 {
                    group.addTask {
                        for request in 0..<25 {
                            let tenant = "tenant-\((worker * 31 + request * 7) % 50)"
                            let title = "\(tenant) w\(worker) r\(request)"
                            let response = try await create(client, title, tenant: tenant)
                            #expect(response.status == .created)
                            if response.status == .created {
                                acknowledged.withLock { $0[tenant, default: []].append(title) }
                            }
                            // Every row a tenant sees is tagged with it.
                            let seen = try await titles(client, tenant: tenant)
                            #expect(seen.allSatisfy { $0.hasPrefix("\(tenant) ") }, "\(tenant) saw \(seen)")
                        }
                    }
                }
                try await group.waitForAll()
            }
            for (tenant, written) in acknowledged.withLock({ $0 }) {
                #expect(Set(try await titles(client, tenant: tenant)) == Set(written), "\(tenant)")
            }
        }
        #expect(acknowledged.withLock { $0.values.map(\.count).reduce(0, +) } == 400)
        await root.shutdown()
    }

    @Test func atTheBoundIdleTenantsAreEvictedTheirFilesClosedAndNoWriteIsLost() async throws {
        let folder = try TemporaryFolder()
        let (app, root) = try await makeApplication(try await configuration(folder, environment: ["TENANTS_MAX": "5"]))
        let acknowledged = Locked<[String: Set<String>]>([:])
        let statuses = Locked<[String: Int]>([:])
        let mostOpen = Locked<Int>(0)
        try await app.test(.live) { client async throws in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for worker in 0..<8 {
                    group.addTask {
                        for request in 0..<30 {
                            let tenant = "t\((worker + request * 3) % 20)"
                            let title = "\(tenant) \(worker)-\(request)"
                            let response = try await create(client, title, tenant: tenant)
                            let code =
                                response.status == .created
                                ? "201" : "\(response.status.code) \(response.object["code"] ?? "")"
                            statuses.withLock { $0[code, default: 0] += 1 }
                            if response.status == .created {
                                acknowledged.withLock { _ = $0[tenant, default: []].insert(title) }
                            }
                            let open = try await statistics(client).tenants?.open ?? .max
                            mostOpen.withLock { $0 = max($0, open) }
                        }
                    }
                }
                try await group.waitForAll()
            }
            let stats = try await statistics(client)
            #expect(stats.tenants!.evicted > 0)
            // No file of an evicted tenant stays held: once the evictions' closes have run (in
            // tasks of their own), at most the open tenants' files are.
            func held() -> Set<Substring> {
                Set(
                    openFiles().filter { $0.hasPrefix(folder.path("tenants")) }
                        .map { URL(filePath: $0).lastPathComponent.split(separator: ".")[0] }
                )
            }
            #expect(await eventually(within: .seconds(10)) { held().count <= stats.tenants!.open }, "\(held())")
            for (tenant, written) in acknowledged.withLock({ $0 }) {
                #expect(Set(try await titles(client, tenant: tenant)).isSuperset(of: written), "\(tenant)")
            }
        }
        #expect(mostOpen.withLock { $0 } <= 5)
        #expect(
            Set(statuses.withLock { $0.keys }).isSubset(of: ["201", "503 tenant_capacity"]),
            "\(statuses.withLock { $0 })"
        )
        await root.shutdown()
        #expect(openFiles().filter { $0.hasPrefix(folder.path("tenants")) } == [])
    }

    /// Sends `message` on a WebSocket connection as `tenant` and returns the reply, parsed.
    private func rate(_ client: some TestClientProtocol, _ message: String, tenant: String) async throws -> [String:
        Any]
    {
        let replies = Recorder<String>()
        try await client.ws("/movies/live", configuration: .init(additionalHeaders: tenantHeaders(tenant))) {
            inbound,
            outbound,
            _ in
            var iterator = inbound.messages(maxSize: 1 << 16).makeAsyncIterator()
            try await outbound.write(.text(message))
            if case .text(let reply) = try await iterator.next() { replies.record(reply) }
        }
        return replies.all.first.flatMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
            ?? [:]
    }

    @Test func aWebSocketConnectionAndItsMessagesBelongToTheUpgradesTenant() async throws {
        let folder = try TemporaryFolder()
        let (app, root) = try await makeApplication(try await configuration(folder))
        try await app.test(.live) { client async throws in
            let created = try await create(client, "Rated", tenant: "a")
            #expect(created.status == .created)
            let id = try created.decode(Movie.self).id
            let message = #"{"rate":{"movieID":\#(id),"stars":4}}"#
            #expect(try await rate(client, message, tenant: "a")["count"] as? Int == 1)
            // Tenant b has no such movie: its message runs on its own database.
            let other = try await rate(client, message, tenant: "b")
            #expect((other["error"] as? [String: Any])?["code"] as? String == "not_found")
            // No tenant, or an invalid one: the upgrade is refused.
            await #expect(throws: (any Error).self) {
                try await client.ws("/movies/live") { _, _, _ in }
            }
            await #expect(throws: (any Error).self) {
                try await client.ws("/movies/live", configuration: .init(additionalHeaders: tenantHeaders("B!"))) {
                    _,
                    _,
                    _ in
                }
            }
        }
        await root.shutdown()
        let database = try await SQLiteDatabase.open(SQLiteConfiguration(path: folder.path("tenants/a.sqlite")))
        #expect(try await database.read { try $0.scalar("SELECT count(*) FROM ratings", as: Int.self) } == 1)
        await database.close()
    }

    @Test func aTenantWhoseDatabaseCannotOpenFailsAloneAndRecoversOnItsNextRequest() async throws {
        let folder = try TemporaryFolder()
        let tenants = folder.path("tenants")
        // A directory where the tenant's file would go: SQLite cannot open it.
        try FileManager.default.createDirectory(atPath: "\(tenants)/broken.sqlite", withIntermediateDirectories: true)
        let (app, root) = try await makeApplication(try await configuration(folder))
        try await app.test(.live) { client async throws in
            try await client.execute(uri: "/movies", method: .get, headers: tenantHeaders("broken")) { response in
                response.expectError(.serviceUnavailable, code: "tenant_unavailable", field: nil)
            }
            #expect(try await create(client, "Fine", tenant: "fine").status == .created)
            #expect(try await titles(client, tenant: "fine") == ["Fine"])
            try FileManager.default.removeItem(atPath: "\(tenants)/broken.sqlite")
            #expect(try await titles(client, tenant: "broken") == [])
        }
        await root.shutdown()
    }

    @Test func aTenantsFileOverlaysTheProfileForThatTenantOnly() async throws {
        let folder = try TemporaryFolder()
        // The repository's Config/tenants/demo.json selects the fixture catalog.
        let configuration = try await configuration(folder)
        #expect(configuration.tenants?.overlays[TenantID("demo")!]?.repositoryVariant == "fixture")
        let (app, root) = try await makeApplication(configuration)
        try await app.test(.live) { client async throws in
            #expect(try await titles(client, tenant: "demo").isEmpty == false)
            #expect(try await titles(client, tenant: "other") == [])
        }
        await root.shutdown()
    }

    @Test func inProductionOnlyTenantsWithAFileExist() async throws {
        let folder = try TemporaryFolder()
        let configuration = try await configuration(
            folder,
            profile: .production,
            environment: ["TENANTS_ENABLED": "true"]
        )
        #expect(configuration.tenants?.opensUnknownTenants == false)
        let (app, root) = try await makeApplication(configuration)
        try await app.test(.live) { client async throws in
            try await client.execute(uri: "/movies", method: .get, headers: tenantHeaders("stranger")) { response in
                response.expectError(.notFound, code: "unknown_tenant", field: "X-Tenant")
            }
            #expect(try await titles(client, tenant: "demo").isEmpty == false)
        }
        #expect(root.tenantStatistics.open == 1)
        await root.shutdown()
        #expect(!FileManager.default.fileExists(atPath: folder.path("tenants/stranger.sqlite")))
    }

    @Test func anInvalidTenantFileNamesItsKeyAndFile() async throws {
        let folder = try TemporaryFolder()
        let config = folder.path("config")
        try FileManager.default.createDirectory(atPath: "\(config)/tenants", withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: "\(repositoryConfigFolder)/multitenant.json",
            toPath: "\(config)/multitenant.json"
        )
        try #"{"database":{"readers":0}}"#
            .write(toFile: "\(config)/tenants/acme.json", atomically: true, encoding: .utf8)
        let environment = ["CONFIG_DIR": config, "TENANTS_DIRECTORY": folder.path("tenants"), "APP_ENV": "multitenant"]
        await #expect {
            try await AppConfiguration.load(environment: environment)
        } throws: { error in
            "\(error)"
                == "Invalid configuration: database.readers in \(config)/tenants/acme.json: expected an integer in 1…64"
        }
        try #"{"catalog":{"colour":"red"}}"#
            .write(toFile: "\(config)/tenants/acme.json", atomically: true, encoding: .utf8)
        await #expect {
            try await AppConfiguration.load(environment: environment)
        } throws: { error in
            "\(error)"
                .hasPrefix(
                    "Invalid configuration: catalog.colour in \(config)/tenants/acme.json: is not a tenant setting"
                )
        }
        try FileManager.default.removeItem(atPath: "\(config)/tenants/acme.json")
        try "{}".write(toFile: "\(config)/tenants/Acme.json", atomically: true, encoding: .utf8)
        await #expect {
            try await AppConfiguration.load(environment: environment)
        } throws: { error in
            "\(error)".contains("\(config)/tenants/Acme.json: 'Acme' is not a tenant ID")
        }
        await #expect {
            try await AppConfiguration.load(environment: environment.merging(["TENANTS_MAX": "0"]) { $1 })
        } throws: { error in
            "\(error)".hasPrefix("Invalid configuration: tenants.max in environment variable TENANTS_MAX")
        }
    }
}

/// A value shared by concurrent tasks.
private final class Locked<Value: Sendable>: Sendable {
    private let value: Mutex<Value>
    init(_ value: Value) { self.value = Mutex(value) }
    func withLock<R>(_ body: (inout Value) -> R) -> R { value.withLock { body(&$0) } }
}

/// The files this process holds open.
private func openFiles() -> [String] {
    let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    return descriptors.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)") }
}
