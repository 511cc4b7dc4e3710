import Foundation
import Logging
import ScopedTestSupport
import Synchronization
import Testing

@testable import CatalogApp

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The example server, started as `ExampleServer` starts it, reloading its configuration while
/// it serves: each change of the `CONFIG_FILE` file over the profile is applied within the
/// provider's poll, or rejected with the old configuration still serving, and no request fails.
@Suite(.serialized)
struct LiveReloadTests {
    /// A running server, its overlay file, and what it logged.
    private struct Server {
        let base: URL
        let overlay: String
        let capture: LogCapture

        func write(_ json: String) throws {
            // Written whole, then renamed over the file: a reload never reads half of it.
            let partial = overlay + ".partial"
            try Data(json.utf8).write(to: URL(filePath: partial))
            _ = rename(partial, overlay)
        }

        func get(
            _ path: String,
            method: String = "GET",
            body: String? = nil,
            headers: [String: String] = [:]
        ) async throws -> (status: Int, body: String) {
            try await httpRequest(base, path, method: method, body: body, headers: headers)
        }

        func statistics() async throws -> [String: Any] {
            let body = try await get("/debug/stats").body
            return try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any] ?? [:]
        }

        func generation() async throws -> Int { try await statistics()["generation"] as? Int ?? 0 }

        /// The value of the sample `line` starts with in `/metrics`, such as
        /// `scoped_root_generation`.
        func metric(_ line: String) async throws -> Double? {
            let exposition = try await get("/metrics").body
            return exposition.split(separator: "\n").first { $0.hasPrefix(line + " ") }
                .flatMap { Double($0.dropFirst(line.count + 1)) }
        }

        var messages: [String] { capture.lines.map(\.message) }
    }

    private func withServer(
        profile: String = "development",
        configFolder: String = repositoryConfigFolder,
        environment extra: [String: String] = [:],
        _ body: (Server) async throws -> Void
    ) async throws {
        let folder = try TemporaryFolder(prefix: "live-reload")
        let overlay = folder.path("deployment.json")
        try Data(#"{"log":{"level":"info"}}"#.utf8).write(to: URL(filePath: overlay))
        let environment = [
            "APP_ENV": profile, "CONFIG_DIR": configFolder, "CONFIG_FILE": overlay,
            "DATABASE_PATH": folder.path("catalog.sqlite"), "HTTP_PORT": "0",
        ]
        .merging(extra) { $1 }
        let configuration = try await AppConfiguration.load(environment: environment)
        let capture = LogCapture()
        let logger = capture.logger(label: "server", level: .notice)
        let server = Task { try await CatalogServer.run(configuration, environment: environment, logger: logger) }
        defer { server.cancel() }
        let port = Mutex<Int?>(nil)
        #expect(
            await eventually(within: .seconds(20)) {
                let listening = capture.lines.first { $0.message.hasPrefix("Listening on") }?.message
                port.withLock {
                    $0 = listening.flatMap { Int($0.split(separator: ":").last?.prefix { $0.isNumber } ?? "") }
                }
                return port.withLock { $0 } != nil
            }
        )
        let listeningPort = try #require(port.withLock { $0 })
        let base = try #require(URL(string: "http://127.0.0.1:\(listeningPort)"))
        try await body(Server(base: base, overlay: overlay, capture: capture))
        server.cancel()
        _ = try? await server.value
    }

    @Test func aTenantsFileIsAppliedLiveToThatTenantAndAnInvalidOneIsRejected() async throws {
        let folder = try TemporaryFolder(prefix: "live-tenants")
        let config = folder.path("config")
        try FileManager.default.createDirectory(atPath: "\(config)/tenants", withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: "\(repositoryConfigFolder)/multitenant.json",
            toPath: "\(config)/multitenant.json"
        )
        let acmeFile = "\(config)/tenants/acme.json"
        func writeAcme(_ json: String) throws {
            try Data(json.utf8).write(to: URL(filePath: acmeFile + ".partial"))
            _ = rename(acmeFile + ".partial", acmeFile)
        }
        try await withServer(
            profile: "multitenant",
            configFolder: config,
            environment: ["TENANTS_DIRECTORY": folder.path("tenants")]
        ) { server in
            func titles(_ tenant: String) async throws -> [String] {
                let (status, body) = try await server.get("/movies?limit=500", headers: ["X-Tenant": tenant])
                #expect(status == 200, "\(tenant): \(body)")
                let page = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]
                return (page?["items"] as? [[String: Any]] ?? []).compactMap { $0["title"] as? String }
            }
            for tenant in ["acme", "other"] {
                let created = try await server.get(
                    "/movies",
                    method: "POST",
                    body: #"{"title":"\#(tenant) own","year":2001}"#,
                    headers: ["X-Tenant": tenant]
                )
                #expect(created.status == 201)
            }
            #expect(try await titles("acme") == ["acme own"])
            // acme's file selects the fixture catalog: applied to acme, and only to acme.
            try writeAcme(#"{"catalog":{"repository":"fixture"}}"#)
            #expect(await eventually(within: .seconds(10)) { (try? await server.generation()) == 2 })
            let fixture = try await titles("acme")
            #expect(!fixture.isEmpty && !fixture.contains("acme own"))
            #expect(try await titles("other") == ["other own"])
            // An invalid file is rejected, naming its key and file; acme keeps its settings.
            try writeAcme(#"{"database":{"readers":0}}"#)
            #expect(
                await eventually(within: .seconds(10)) {
                    server.messages.contains { $0.contains("database.readers in \(acmeFile)") }
                }
            )
            #expect(try await server.generation() == 2)
            #expect(try await titles("acme") == fixture)
            // Removed: acme is back on its own database, its rows where it left them.
            try FileManager.default.removeItem(atPath: acmeFile)
            #expect(await eventually(within: .seconds(10)) { (try? await server.generation()) == 3 })
            #expect(try await titles("acme") == ["acme own"])
        }
    }

    @Test func changesAreAppliedOrRejectedWhileEveryRequestSucceeds() async throws {
        try await withServer { server in
            #expect(try await server.generation() == 1)
            // The registry is the process's: other tests' roots count there too.
            let appliedBefore = try await server.metric(#"scoped_reloads_total{outcome="applied"}"#) ?? 0
            // Readers and writers all along: not one fails, whatever the reloads do.
            let counts = RequestCounts()
            // Stopped by a flag, never by cancellation: FoundationNetworking's `data(for:)` can
            // deadlock when its task is cancelled as the response arrives.
            let load = Task {
                while !counts.stopped.load(ordering: .relaxed) {
                    let status = (try? await server.get("/movies?limit=5").status) ?? 0
                    if status != 200 { counts.failures.add(1, ordering: .relaxed) }
                    counts.served.add(1, ordering: .relaxed)
                }
            }
            defer { counts.stopped.store(true, ordering: .relaxed) }
            // Writes too: each one acknowledged must still be there after every reload.
            let writes = Task {
                var acknowledged: [String] = []
                var number = 0
                while !counts.stopped.load(ordering: .relaxed) {
                    number += 1
                    let body = #"{"title":"Reload \#(number)","year":2001,"director":"Test"}"#
                    guard let response = try? await server.get("/movies", method: "POST", body: body) else { continue }
                    if response.status == 201, let location = response.body.firstMatch(of: /"id":(\d+)/) {
                        acknowledged.append("/movies/\(location.1)")
                    } else {
                        counts.failures.add(1, ordering: .relaxed)
                    }
                }
                return acknowledged
            }

            // Only the log level: the database is carried over, still open.
            let started = ContinuousClock.now
            try server.write(#"{"log":{"level":"debug"}}"#)
            #expect(await eventually(within: .seconds(5)) { (try? await server.generation()) == 2 })
            #expect(ContinuousClock.now - started < .seconds(3), "a change was noticed after more than 2 s")
            // The log line reaches the test through the server's output, after the generation may be read.
            #expect(
                await eventually(within: .seconds(5)) {
                    server.messages.contains("Configuration reloaded, generation 2: carried over: sqliteDatabase")
                }
            )
            #expect(LiveLogLevel.shared.level == .debug)

            // More readers: the database is rebuilt, and its connections are the new pool's.
            try server.write(#"{"log":{"level":"debug"},"database":{"readers":6}}"#)
            #expect(await eventually(within: .seconds(5)) { (try? await server.generation()) == 3 })
            #expect(
                await eventually(within: .seconds(5)) {
                    server.messages.contains(
                        "Configuration reloaded, generation 3: rebuilt: sqliteDatabase (sqliteConfiguration.readers changed)"
                    )
                }
            )
            #expect(
                await eventually(within: .seconds(5)) {
                    ((try? await server.statistics())?["database"] as? [String: Any])?["connections"] as? Int == 7
                },
                "the replaced pool's connections were not closed"
            )

            // Four changes that cannot be applied: each is rejected, naming the file, the key and
            // the reason, and generation 3 goes on serving.
            let overlay = server.overlay
            try server.write(#"{"database":{"readers":"#)
            #expect(
                await eventually(within: .seconds(5)) {
                    server.messages.contains {
                        $0.hasPrefix("Configuration reload rejected: (file) in \(overlay): the file is not valid JSON")
                    }
                }
            )
            try server.write(#"{"database":{"readers":0}}"#)
            #expect(
                await eventually(within: .seconds(5)) {
                    server.messages.contains {
                        $0.hasPrefix(
                            "Configuration reload rejected: Invalid configuration: database.readers in \(overlay): 0 is outside"
                        )
                    }
                }
            )
            try server.write(#"{"http":{"host":"localhost"}}"#)
            #expect(
                await eventually(within: .seconds(5)) {
                    server.messages.contains {
                        $0.contains("http.host/http.port in \(overlay): needs a restart")
                    }
                }
            )
            // The exporters are the process's tracing and metrics backends, bootstrapped once.
            try server.write(#"{"otel":{"exporter":{"otlp":{"endpoint":"http://127.0.0.1:4318"}}}}"#)
            #expect(
                await eventually(within: .seconds(5)) {
                    server.messages.contains { $0.contains("otel in \(overlay): needs a restart") }
                }
            )
            #expect(try await server.generation() == 3)
            let reloads = try await server.statistics()["reloads"] as? [String: Int]
            #expect(reloads == ["applied": 2, "rejected": 4])

            // The override rule reloads too: a variant the new rule does not list is refused.
            #expect(try await server.get("/movies/1", headers: ["X-Catalog": "fixture"]).status == 200)
            try server.write(#"{"overrides":{"variants":[]}}"#)
            #expect(await eventually(within: .seconds(5)) { (try? await server.generation()) == 4 })
            #expect(try await server.get("/movies/1", headers: ["X-Catalog": "fixture"]).status == 400)

            // At least this server's three: roots of tests running beside this one reload into
            // the same process-wide registry (the server's own count is checked exactly above).
            let appliedAfter = try await server.metric(#"scoped_reloads_total{outcome="applied"}"#) ?? 0
            #expect(appliedAfter >= appliedBefore + 3)
            #expect(try await server.metric("scoped_root_generation") != nil)

            counts.stopped.store(true, ordering: .relaxed)
            _ = await load.value
            let written = await writes.value
            #expect(counts.served.load(ordering: .relaxed) > 10)
            #expect(written.count > 10)
            for path in written {
                #expect(try await server.get(path).status == 200, "\(path) was acknowledged and lost")
            }
            #expect(counts.failures.load(ordering: .relaxed) == 0, "requests failed during reloads")
        }
    }
}

/// The requests the load made, and those that failed.
private final class RequestCounts: Sendable {
    let served = Atomic(0)
    let failures = Atomic(0)
    let stopped = Atomic(false)
}
