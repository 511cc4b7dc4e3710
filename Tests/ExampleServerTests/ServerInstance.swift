import Foundation
import Logging
import ScopedTestSupport
import Synchronization
import Testing

@testable import CatalogApp

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One instance of the example server, run as `ExampleServer` runs it, in this process.
struct ServerInstance {
    let base: URL
    let capture: LogCapture
    let task: Task<Void, any Error>

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

    /// `/debug/stats`'s `settings` object.
    func settings() async throws -> [String: Any] { try await statistics()["settings"] as? [String: Any] ?? [:] }

    /// `/debug/stats`'s `tenantRegistry` object.
    func tenantRegistry() async throws -> [String: Any] {
        try await statistics()["tenantRegistry"] as? [String: Any] ?? [:]
    }

    var messages: [String] { capture.lines.map(\.message) }

    /// Starts `count` instances on a new PostgreSQL database with `environment` over the
    /// repository's profile, waits until each is `ready`, runs `body` with them and a `psql` on
    /// the database, and stops them.
    static func withInstances(
        _ count: Int,
        environment extra: [String: String],
        ready: (ServerInstance) async -> Bool,
        _ body: (_ instances: [ServerInstance], _ sql: @Sendable (String) async throws -> String) async throws -> Void
    ) async throws {
        let server = try await PostgresTestServer.shared()
        let database = try await server.makeDatabase()
        let folder = try TemporaryFolder(prefix: "instances")
        let environment = [
            "CONFIG_DIR": repositoryConfigFolder, "DATABASE_PATH": folder.path("unused.sqlite"),
            "TENANTS_DIRECTORY": folder.path("tenants"),
            "DATABASE_KIND": "postgres", "DATABASE_URL": database.url, "SETTINGS_POLL_INTERVAL": "1",
            "HTTP_PORT": "0", "SHUTDOWN_CLOSE_TIMEOUT": "30",
        ]
        .merging(extra) { $1 }
        var instances: [ServerInstance] = []
        defer { for instance in instances { instance.task.cancel() } }
        for _ in 0..<count {
            let configuration = try await AppConfiguration.load(environment: environment)
            let capture = LogCapture()
            let logger = capture.logger(label: "server", level: .notice)
            let task = Task { try await CatalogServer.run(configuration, environment: environment, logger: logger) }
            let port = Mutex<Int?>(nil)
            let listening = await eventually(within: .seconds(30)) {
                let line = capture.lines.first { $0.message.hasPrefix("Listening on") }?.message
                port.withLock {
                    $0 = line.flatMap { Int($0.split(separator: ":").last?.prefix { $0.isNumber } ?? "") }
                }
                return port.withLock { $0 } != nil
            }
            try #require(listening, "\(capture.lines.map(\.message))")
            let listeningPort = try #require(port.withLock { $0 })
            let base = try #require(URL(string: "http://127.0.0.1:\(listeningPort)"))
            instances.append(ServerInstance(base: base, capture: capture, task: task))
        }
        // Every instance ready (listening to the database) before the test commits anything.
        for instance in instances {
            #expect(
                await eventually(within: .seconds(10)) { await ready(instance) },
                "\(instance.base) is not ready"
            )
        }
        try await body(instances) { try await server.psql($0, database: database.name) }
        for instance in instances {
            instance.task.cancel()
            _ = try? await instance.task.value
        }
    }
}

/// One HTTP request to the server at `base`, with a JSON `body` when one is given.
///
/// - Returns: the response's status and body.
func httpRequest(
    _ base: URL,
    _ path: String,
    method: String = "GET",
    body: String? = nil,
    headers: [String: String] = [:]
) async throws -> (status: Int, body: String) {
    var request = URLRequest(url: URL(string: base.absoluteString + path)!)
    request.httpMethod = method
    for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
    if let body {
        request.httpBody = Data(body.utf8)
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    }
    let (data, response) = try await URLSession.shared.data(for: request)
    return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
}
