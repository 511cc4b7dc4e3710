#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization

/// Tenants, on the `multitenant` profile: a SQLite file per tenant, or on PostgreSQL a schema
/// per tenant in the application's database.
///
/// 1. Eviction under load: `tenants.max` = 5, sixteen writers over twenty tenants in rotation,
///    each write's title tagged with its tenant. No more than 5 tenants are ever open (polled from
///    `/debug/stats`), no request fails except with `503 tenant_capacity`, every acknowledged
///    write is in its tenant's database and in no other, and, on SQLite, once the load stops the
///    server holds no file of more tenants than it has open (`/proc/PID/fd`): an evicted
///    tenant's are closed.
/// 2. `kill -9` under writes to ten tenants: every acknowledged write is in its tenant's
///    database after the kill, and each SQLite file passes `integrity_check`.
enum TenantsScenario {
    static let writers = 16
    static let tenantCount = 20

    /// `/debug/stats`' `tenants`.
    private struct Statistics: Decodable {
        struct Tenants: Decodable {
            var open: Int
            var evicted: Int
        }
        var tenants: Tenants
    }

    static func run(_ suite: SuiteOptions, on backend: Store.Backend) async throws -> ScenarioResult {
        var result = ScenarioResult(backend == .sqlite ? "tenants" : "tenants-pg")
        try evictionUnderLoad(suite, on: backend, into: &result)
        try killDuringWrites(suite, on: backend, into: &result)
        return result
    }

    private static func evictionUnderLoad(
        _ suite: SuiteOptions,
        on backend: Store.Backend,
        into result: inout ScenarioResult
    ) throws {
        let folder = suite.workFolder.appending(path: "tenants-\(UUID().uuidString.prefix(8))")
        let store = try Store(backend, suite: suite, name: "tenants-app")
        let server = try store.startServer(
            suite,
            profile: "multitenant",
            environment: ["TENANTS_DIRECTORY": folder.path, "TENANTS_MAX": "5"]
        )
        defer { server.stop() }
        let seconds = Double(suite.scaled(short: 3, full: 30))
        let acknowledged = Mutex<[String: Set<String>]>([:])
        let statuses = Tally()
        let mostOpen = Atomic<Int>(0)
        let mostFilesHeld = Atomic<Int>(0)
        let stop = Atomic<Bool>(false)
        let deadline = ContinuousClock.now + .seconds(seconds)
        onThreads(writers + 1) { client in
            if client == writers {
                // The monitor: open tenants, and the tenant files the server holds.
                while !stop.load(ordering: .relaxed) {
                    if let open = try? openTenants(server) { mostOpen.max(open, ordering: .relaxed) }
                    mostFilesHeld.max(tenantFilesHeld(by: server.pid, in: folder).count, ordering: .relaxed)
                    Thread.sleep(forTimeInterval: 0.02)
                }
                return
            }
            var connection: HTTPConnection?
            var number = 0
            while ContinuousClock.now < deadline {
                number += 1
                let tenant = "t\((client + number * 3) % tenantCount)"
                let title = "\(tenant) \(client)-\(number)"
                do {
                    if connection == nil { connection = try HTTPConnection(port: server.port, timeout: 30) }
                    let response = try create(title, tenant: tenant, on: connection!)
                    if response.status == 201 {
                        statuses.add("201")
                        acknowledged.withLock { _ = $0[tenant, default: []].insert(title) }
                    } else {
                        let code = (try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
                            .flatMap { ($0["error"] as? [String: Any])?["code"] as? String }
                        statuses.add("\(response.status) \(code ?? "?")", example: response.text)
                    }
                } catch {
                    statuses.add("transport error", example: "\(error)")
                    connection = nil
                }
            }
            if client == 0 { stop.store(true, ordering: .relaxed) }
        }
        let statistics = try HTTPConnection(port: server.port).perform(HTTPRequest("GET", "/debug/stats"))
            .json(Statistics.self)
        // Evictions close in tasks of their own: give the last ones a moment.
        var heldAtEnd = tenantFilesHeld(by: server.pid, in: folder)
        _ = eventually(timeout: .seconds(5)) {
            heldAtEnd = tenantFilesHeld(by: server.pid, in: folder)
            return heldAtEnd.count <= statistics.tenants.open
        }
        server.stop()
        // Every acknowledged write is in its tenant's database, and every row there is the tenant's.
        var missing = 0
        var foreign = 0
        for index in 0..<tenantCount {
            let tenant = "t\(index)"
            let titles = try store.tenantMovieTitles(tenant, in: folder) ?? []
            missing += acknowledged.withLock { $0[tenant, default: []] }.subtracting(titles).count
            foreign += titles.filter { !$0.hasPrefix("\(tenant) ") }.count
        }
        let written = acknowledged.withLock { $0.values.map(\.count).reduce(0, +) }
        let counts = statuses.all
        result.report(
            "eviction: \(writers) writers over \(tenantCount) tenants with tenants.max 5 for \(Int(seconds)) s: "
                + "\(counts.sorted { $0.key < $1.key }.map { "\($0.value.grouped) × \($0.key)" }.joined(separator: ", ")); "
                + "\(statistics.tenants.evicted.grouped) evictions"
        )
        result.check(
            "most tenants open at once \(mostOpen.load(ordering: .relaxed))",
            target: "≤ 5",
            mostOpen.load(ordering: .relaxed) <= 5
        )
        let failures = counts.filter { $0.key != "201" && $0.key != "503 tenant_capacity" }
        result.check(
            "requests failing otherwise than 503 tenant_capacity: \(failures.values.reduce(0, +))"
                + (failures.isEmpty
                    ? ""
                    : " (\(failures.keys.sorted().joined(separator: ", ")): \(failures.keys.sorted().first.map(statuses.example) ?? ""))"),
            target: "0",
            failures.isEmpty
        )
        result.check(
            "acknowledged writes missing \(missing) of \(written.grouped)",
            target: "0",
            missing == 0 && written > 0
        )
        result.check("rows in another tenant's database \(foreign)", target: "0", foreign == 0)
        result.check("tenants evicted \(statistics.tenants.evicted)", target: "> 0", statistics.tenants.evicted > 0)
        // On PostgreSQL a tenant's schema shares the application's pool: no file to close.
        guard backend == .sqlite else { return }
        // An evicted tenant's files close beside the tenant that took its place: while running,
        // the server may hold a few more tenants' files than it has open.
        result.report(
            "tenants whose files the server held at once, open and closing: at most \(mostFilesHeld.load(ordering: .relaxed))"
        )
        result.check(
            "tenant files held once the load stopped: \(heldAtEnd.count), with \(statistics.tenants.open) open",
            target: "≤ the open tenants",
            heldAtEnd.count <= statistics.tenants.open
        )
    }

    private static func killDuringWrites(
        _ suite: SuiteOptions,
        on backend: Store.Backend,
        into result: inout ScenarioResult
    ) throws {
        let folder = suite.workFolder.appending(path: "tenants-kill-\(UUID().uuidString.prefix(8))")
        let cycles = suite.scaled(short: 3, full: 20)
        let acknowledged = Mutex<[String: Set<String>]>([:])
        var unsound: [String] = []
        let store = try Store(backend, suite: suite, name: "tenants-kill-app")
        for cycle in 0..<cycles {
            let server = try store.startServer(
                suite,
                profile: "multitenant",
                environment: ["TENANTS_DIRECTORY": folder.path]
            )
            let stop = Atomic<Bool>(false)
            let killer = Thread {
                Thread.sleep(forTimeInterval: Double.random(in: 0.3...1.5))
                server.signal(SIGKILL)
                stop.store(true, ordering: .relaxed)
            }
            killer.start()
            onThreads(12) { client in
                var connection: HTTPConnection?
                var number = 0
                while !stop.load(ordering: .relaxed) {
                    number += 1
                    let tenant = "k\((client + number) % 10)"
                    let title = "\(tenant) \(cycle)-\(client)-\(number)"
                    do {
                        if connection == nil { connection = try HTTPConnection(port: server.port, timeout: 10) }
                        let response = try create(title, tenant: tenant, on: connection!)
                        if response.status == 201 {
                            acknowledged.withLock { _ = $0[tenant, default: []].insert(title) }
                        }
                    } catch {
                        connection = nil
                        if !stop.load(ordering: .relaxed) { Thread.sleep(forTimeInterval: 0.01) }
                    }
                }
            }
            guard server.waitForExit(timeout: .seconds(30)) == 128 + SIGKILL else {
                throw SuiteError("tenants kill cycle \(cycle): the server did not die of SIGKILL")
            }
        }
        var missing = 0
        for index in 0..<10 {
            let tenant = "k\(index)"
            let titles = try store.tenantMovieTitles(tenant, in: folder) ?? []
            missing += acknowledged.withLock { $0[tenant, default: []] }.subtracting(titles).count
            let path = folder.appending(path: "\(tenant).sqlite").path
            if backend == .sqlite && FileManager.default.fileExists(atPath: path) {
                let check = try RawDatabase(path).integrityCheck()
                if check != "ok" { unsound.append("\(tenant): \(check)") }
            }
        }
        let written = acknowledged.withLock { $0.values.map(\.count).reduce(0, +) }
        result.report("kill -9: \(cycles) cycles of 12 writers over 10 tenants, \(written.grouped) acknowledged writes")
        result.check(
            "acknowledged writes missing after kill -9: \(missing)",
            target: "0",
            missing == 0 && written > 0
        )
        guard backend == .sqlite else { return }
        result.check(
            "tenant files failing integrity_check \(unsound.count)\(unsound.isEmpty ? "" : ": \(unsound.prefix(3))")",
            target: "0",
            unsound.isEmpty
        )
    }

    /// Creates a movie titled `title` as `tenant`.
    private static func create(_ title: String, tenant: String, on connection: HTTPConnection) throws -> HTTPResponse {
        try connection.perform(
            HTTPRequest("POST", "/movies", headers: [("X-Tenant", tenant)], json: #"{"title":"\#(title)","year":2001}"#)
        )
    }

    /// How many tenants `server` has open, from `/debug/stats`.
    private static func openTenants(_ server: ServerProcess) throws -> Int {
        try HTTPConnection(port: server.port, timeout: 5).perform(HTTPRequest("GET", "/debug/stats"))
            .json(Statistics.self).tenants.open
    }

    /// The tenants whose files (database, WAL or shared memory) process `pid` holds open in `folder`.
    private static func tenantFilesHeld(by pid: Int32, in folder: URL) -> Set<String> {
        let fds = "/proc/\(pid)/fd"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: fds)) ?? []
        var tenants: Set<String> = []
        for name in names {
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "\(fds)/\(name)"),
                target.hasPrefix(folder.path)
            else { continue }
            tenants.insert(String(URL(filePath: target).lastPathComponent.split(separator: ".")[0]))
        }
        return tenants
    }
}
