import Foundation
import ScopedTestSupport
import Synchronization

/// 18. Configuration reloaded under load: 32 writers and 32 readers for 30 s (10 s in short
/// mode) while the `CONFIG_FILE` file over the profile changes every 2 s (the pool's size, the
/// log level, and on PostgreSQL the password, rotated with `ALTER ROLE … PASSWORD` before the new
/// URL is written); then a file that does not parse and one that fails validation; then 100
/// reloads in a row, each asked for with SIGHUP. No request fails, no acknowledged write is lost,
/// every invalid file is rejected with the old root serving, the replaced pools' connections are
/// closed within 10 s, and memory stays flat across the 100 reloads.
enum ReloadScenario {
    static func run(_ suite: SuiteOptions, on backend: Store.Backend) throws -> ScenarioResult {
        let store = try Store(backend, suite: suite, name: "reload")
        var result = ScenarioResult(store.scenarioName("reload"))
        let overlay = suite.workFolder.appending(path: "reload-\(store.scenarioName("deployment")).json")
        let rotation = try PasswordRotation(store)
        func write(readers: Int, level: String, url: String? = rotation?.url) throws {
            let database = url.map { #""url":"\#($0)","connections":\#(readers * 2)"# } ?? #""readers":\#(readers)"#
            try replace(overlay, with: #"{"log":{"level":"\#(level)"},"database":{\#(database)}}"#)
        }
        try write(readers: 4, level: "warning")
        var environment = ["CONFIG_FILE": overlay.path, "LOG_LEVEL": ""]
        environment.merge(store.environment) { $1 }
        if rotation != nil { environment["DATABASE_URL"] = nil }
        let server = try ServerProcess(
            suite,
            profile: "development",
            database: store.file,
            environment: environment.filter { !$0.value.isEmpty }
        )
        defer { server.stop() }
        func generation() -> Int? { try? ServerStatistics.read(port: server.port).generation }
        guard generation() == 1 else {
            result.check("generation at start-up: \(generation().map(String.init) ?? "none")", target: "1", false)
            return result
        }

        // Under load: a change every 2 s.
        let writes = WriteLoad(port: server.port, writers: 32, name: "reload")
        let reads = ReadLoad(port: server.port, readers: 32)
        let changes = suite.scaled(short: 5, full: 15)
        var applied = 1
        for change in 1...changes {
            Thread.sleep(forTimeInterval: 2)
            if change.isMultiple(of: 2), let rotation { try rotation.rotate() }
            try write(readers: change.isMultiple(of: 2) ? 4 : 6, level: change.isMultiple(of: 3) ? "notice" : "warning")
            applied += 1
            let expected = applied
            if !eventually(timeout: .seconds(5), { generation() == expected }) {
                result.check("change \(change) not applied within 5 s", target: "applied", false)
            }
        }
        Thread.sleep(forTimeInterval: 1)
        writes.stop()
        reads.stop()
        result.report(
            "32 writers, 32 readers; \(changes) changes 2 s apart (pool size, log level\(rotation == nil ? "" : ", password"))"
        )
        result.checkAnswers(of: writes, within: 10, allowed: [])  // every write 201
        result.check(
            "\(reads.count.grouped) reads, \(reads.failed.count) failed\(reads.failed.first.map { " (first: \($0))" } ?? "")",
            target: "0 failed",
            reads.failed.isEmpty && reads.count > 0
        )
        let missing = writes.missing(from: try store.movieTitles())
        let acknowledged = writes.acknowledged.withLock { $0.count }
        result.check("acknowledged writes missing \(missing) of \(acknowledged.grouped)", target: "0", missing == 0)

        // Two files that must be rejected while the old root goes on serving.
        for (content, expected) in [
            (#"{"database":{"readers":"#, "(file) in \(overlay.path): the file is not valid JSON"),
            (#"{"database":{"readers":0}}"#, "database.readers in \(overlay.path)"),
        ] {
            try replace(overlay, with: content)
            server.signal(SIGHUP)
            let rejected = eventually(timeout: .seconds(5)) {
                server.log.contains("Configuration reload rejected") && server.log.contains(expected)
            }
            let served = (try? HTTPConnection(port: server.port).perform(HTTPRequest("GET", "/movies?limit=1")))?.status
            result.check(
                "rejected, naming \(expected.split(separator: " ").first ?? ""): \(rejected); generation \(generation() ?? 0), GET \(served ?? 0)",
                target: "rejected; generation \(applied), 200",
                rejected && generation() == applied && served == 200
            )
        }

        // The replaced pools: closed within 10 s of their last request.
        try write(readers: 4, level: "warning")
        applied += 1
        _ = eventually(timeout: .seconds(5)) { generation() == applied }
        let pools = try PoolConnections(store, server: server, readers: 4)
        let closed = eventually(timeout: .seconds(10)) { pools.open() <= pools.allowed }
        result.check(
            "connections open 10 s after the last reload: \(pools.open()) (the current pool allows \(pools.allowed))",
            target: "≤ \(pools.allowed)",
            closed
        )

        // 100 reloads in a row, each asked for with SIGHUP: memory stays flat.
        var residentAt20: Int?
        var reloaded = 0
        for step in 1...100 {
            try write(readers: step.isMultiple(of: 2) ? 6 : 4, level: step.isMultiple(of: 2) ? "notice" : "warning")
            server.signal(SIGHUP)
            let expected = applied + 1
            guard eventually(timeout: .seconds(5), { generation() == expected }) else { break }
            applied = expected
            reloaded += 1
            if step == 20 { residentAt20 = server.residentMemory }
        }
        let residentAt100 = server.residentMemory
        var growth: Int?
        if let residentAt20, let residentAt100 { growth = residentAt100 - residentAt20 }
        result.check(
            "100 reloads with SIGHUP: \(reloaded) applied; RSS after 20 \(residentAt20.map { "\($0 / (1 << 20)) MiB" } ?? "?"), after 100 \(residentAt100.map { "\($0 / (1 << 20)) MiB" } ?? "?")",
            target: "100; growth < 8 MiB",
            reloaded == 100 && (growth ?? .max) < 8 << 20
        )
        result.checkNothingHeld(by: server)
        result.checkStopsOnSIGTERM(server, within: .seconds(12))
        return result
    }

    /// Writes `content` whole, then renames it over `file`, as a deployment tool would: a reload
    /// never reads half of it.
    private static func replace(_ file: URL, with content: String) throws {
        let partial = file.appendingPathExtension("partial")
        try Data(content.utf8).write(to: partial)
        guard rename(partial.path, file.path) == 0 else { throw SuiteError("could not rename over \(file.path)") }
    }
}

/// On PostgreSQL, a role of the scenario's own whose password it rotates.
private final class PasswordRotation: Sendable {
    let store: Store
    let role: String
    let database: String
    private let base: String
    private let password = Mutex(1)

    /// `nil` on SQLite.
    init?(_ store: Store) throws {
        guard let server = store.postgresServer, let url = store.environment["DATABASE_URL"] else { return nil }
        self.store = store
        database = String(url.split(separator: "/").last ?? "")
        role = "reload_" + database
        base = url
        try server.psqlBlocking(
            "CREATE ROLE \(role) LOGIN PASSWORD 'secret-1'; ALTER DATABASE \(database) OWNER TO \(role)"
        )
        try server.psqlBlocking("ALTER SCHEMA public OWNER TO \(role)", database: database)
    }

    /// The database's URL with the role and its current password.
    var url: String {
        base.replacing(/\/\/[^@]*@/, with: "//\(role):secret-\(password.withLock { $0 })@")
    }

    /// Changes the role's password; the URL then carries the new one.
    func rotate() throws {
        let next = password.withLock { password in
            password += 1
            return password
        }
        try store.postgresServer?.psqlBlocking("ALTER ROLE \(role) PASSWORD 'secret-\(next)'")
    }
}

/// The database connections open now, from the database's side on PostgreSQL and from the
/// server's `/debug/stats` on SQLite, and how many the current pool may hold.
private struct PoolConnections {
    let store: Store
    let server: ServerProcess
    let allowed: Int

    init(_ store: Store, server: ServerProcess, readers: Int) throws {
        self.store = store
        self.server = server
        // SQLite: the readers and the writer; PostgreSQL: the pool's maximum, `connections`.
        allowed = store.postgresServer == nil ? readers + 1 : readers * 2
    }

    func open() -> Int {
        guard let postgres = store.postgresServer, let url = store.environment["DATABASE_URL"] else {
            return (try? ServerStatistics.read(port: server.port).database.connections) ?? .max
        }
        let database = String(url.split(separator: "/").last ?? "")
        let count = try? postgres.psqlBlocking(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = '\(database)' AND usename LIKE 'reload_%'"
        )
        return count.flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) } ?? .max
    }
}

/// Readers that `GET /movies` on threads of their own until stopped; any answer but 200 fails.
private final class ReadLoad: Sendable {
    private let answers = Atomic<Int>(0)
    private let failures = Mutex<[String]>([])
    private let stopped = Atomic<Bool>(false)
    private let finished = DispatchGroup()

    init(port: Int, readers: Int) {
        for _ in 0..<readers {
            finished.enter()
            let thread = Thread { [self] in
                var connection: HTTPConnection?
                while !stopped.load(ordering: .relaxed) {
                    do {
                        if connection == nil { connection = try HTTPConnection(port: port, timeout: 10) }
                        let response = try connection!.perform(HTTPRequest("GET", "/movies?limit=5"))
                        if response.status != 200 { failures.withLock { $0.append("status \(response.status)") } }
                    } catch {
                        failures.withLock { $0.append("\(error)") }
                        connection = nil
                    }
                    answers.add(1, ordering: .relaxed)
                }
                finished.leave()
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
    }

    func stop() {
        stopped.store(true, ordering: .relaxed)
        finished.wait()
    }

    var count: Int { answers.load(ordering: .relaxed) }
    var failed: [String] { failures.withLock { $0 } }
}
