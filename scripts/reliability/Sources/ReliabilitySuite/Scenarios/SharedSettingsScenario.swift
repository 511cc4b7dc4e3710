import Foundation
import ScopedTestSupport
import Synchronization

/// 13. Shared settings: three instances on one PostgreSQL cluster with `settings.fromDatabase`
/// (polled every second as the fallback). Under 16 clients spread over them, 20 changes of
/// the override rule's variants in a row, each committed with `scoped_set_setting`: every instance serves
/// each within 1 s of its commit (p99), no request fails, no acknowledged write is lost. Then the
/// faults: one instance's listening connection terminated, an invalid value committed, the
/// cluster restarted, and the cluster down for 30 s (5 s in short mode): each instance converges,
/// rejects, or keeps serving its last good version, as RELIABILITY.md states.
enum SharedSettingsScenario {
    static func run(_ suite: SuiteOptions) throws -> ScenarioResult {
        var result = ScenarioResult("shared-settings")
        let cluster = try PostgresTestServer.dedicatedBlocking()
        let store = try Store(.postgres, suite: suite, name: "shared-settings", server: cluster)
        let environment = ["SETTINGS_FROM_DATABASE": "true", "SETTINGS_POLL_INTERVAL": "1"]
        var servers: [ServerProcess] = []
        defer { for server in servers { server.stop() } }
        // One after the other: the first migrates and seeds, the others find both done.
        for _ in 0..<3 {
            servers.append(try store.startServer(suite, profile: "development", environment: environment))
        }
        let ports = servers.map(\.port)
        let database = try store.postgresDatabase ?? { throw SuiteError("no PostgreSQL database") }()
        func sql(_ statement: String) throws -> Int {
            Int(try cluster.psqlBlocking(statement, database: database)) ?? -1
        }
        /// How long after `committed` every instance serves `version`; `nil` past `bound`.
        func delays(until version: Int, after committed: ContinuousClock.Instant, bound: Duration) -> [Duration?] {
            ports.map { port in
                eventually(timeout: bound) { Settings.read(port: port)?.version == version }
                    ? ContinuousClock.now - committed : nil
            }
        }
        _ = eventually(timeout: .seconds(10)) { ports.allSatisfy { Settings.read(port: $0)?.listening == true } }

        // 20 changes under load.
        let failures = Tally()
        let acknowledged = Mutex<[Int: String]>([:])
        let stop = Atomic(false)
        let finished = Atomic(false)
        let clients = Thread {
            onThreads(16) { client in
                let port = ports[client % ports.count]
                var connection: HTTPConnection?
                var number = 0
                while !stop.load(ordering: .relaxed) {
                    number += 1
                    do {
                        if connection == nil { connection = try HTTPConnection(port: port, timeout: 10) }
                        if client % 8 == 0 {
                            let title = "settings-\(client)-\(number)"
                            let request = HTTPRequest("POST", "/movies", json: #"{"title":"\#(title)","year":2001}"#)
                            let response = try connection!.perform(request)
                            guard response.status == 201, let movie = try? response.json(Movie.self) else {
                                failures.add("failures", example: "POST \(response.status)")
                                continue
                            }
                            acknowledged.withLock { $0[movie.id] = title }
                        } else {
                            let response = try connection!.perform(HTTPRequest("GET", "/movies?limit=5"))
                            if response.status != 200 { failures.add("failures", example: "GET \(response.status)") }
                        }
                    } catch {
                        connection = nil
                        failures.add("failures", example: "\(error)")
                    }
                }
            }
            finished.store(true, ordering: .relaxed)
        }
        clients.start()
        var served: [Duration] = []
        var late = 0
        for change in 1...20 {
            // The override rule: a change every request follows, that moves no write elsewhere.
            let variants = change.isMultiple(of: 2) ? "[\"fixture\"]" : "[]"
            let version = try sql("SELECT scoped_set_setting('overrides.variants', '\(variants)')")
            let committed = ContinuousClock.now
            for delay in delays(until: version, after: committed, bound: .seconds(10)) {
                if let delay { served.append(delay) } else { late += 1 }
            }
        }
        stop.store(true, ordering: .relaxed)
        _ = eventually(timeout: .seconds(30)) { finished.load(ordering: .relaxed) }
        served.sort()
        let p99 = served.isEmpty ? Duration.seconds(99) : served[min(served.count - 1, served.count * 99 / 100)]
        result.report(
            "3 instances, 16 clients, 20 changes: from commit to served p50 \((served[served.count / 2]).inMilliseconds), max \((served.last ?? .zero).inMilliseconds)"
        )
        result.check(
            "served within 1 s of the commit, p99 \(p99.inMilliseconds)",
            target: "< 1000 ms",
            p99 < .seconds(1) && late == 0
        )
        result.check("failed requests \(failures["failures"])", target: "0", failures["failures"] == 0)
        if failures["failures"] > 0 { result.report("first failure: \(failures.example("failures"))") }
        let stored = try store.movieTitles()
        let lost = acknowledged.withLock { $0.filter { stored[$0.key] != $0.value }.count }
        let written = acknowledged.withLock { $0.count }
        result.check("acknowledged writes \(written.grouped), lost \(lost)", target: "0", lost == 0 && written > 0)

        // One listening connection terminated: a change committed right after reaches every
        // instance, the cut one within its poll (1 s) and a second, and it listens again.
        let terminated = try cluster.psqlBlocking(
            """
            SELECT pg_terminate_backend(pid) FROM pg_stat_activity
            WHERE datname = '\(database)' AND application_name = 'scoped_settings' LIMIT 1
            """,
            database: database
        )
        // (`shutdown.closeTimeout`: the suite sets LOG_LEVEL, which is over the database's `log.level`.)
        var version = try sql("SELECT scoped_set_setting('shutdown.closeTimeout', '4')")
        var after = delays(until: version, after: .now, bound: .seconds(5))
        result.check(
            "one listening connection terminated (\(terminated == "t" ? "done" : "not found")): converged in \(worst(after))",
            target: "< 2000 ms",
            terminated == "t" && after.allSatisfy { $0 != nil && $0! < .seconds(2) }
        )
        let relistened = eventually(timeout: .seconds(5)) {
            ports.allSatisfy { Settings.read(port: $0)?.listening == true }
        }
        result.check("listening again on every instance", target: "yes", relistened)

        // An invalid value: rejected by every instance, which keeps serving; the next valid one applies.
        let generations = ports.map { Settings.generation(port: $0) }
        let invalid = try sql("SELECT scoped_set_setting('catalog.repository', '\"nowhere\"')")
        let rejected = ports.filter { port in
            eventually(timeout: .seconds(3)) { Settings.read(port: port)?.rejectedVersion == invalid }
        }
        let unchanged = ports.map { Settings.generation(port: $0) } == generations
        let serving = ports.allSatisfy { port in
            (try? HTTPConnection(port: port).perform(HTTPRequest("GET", "/movies?limit=1")).status) == 200
        }
        result.check(
            "catalog.repository \"nowhere\" committed: rejected by \(rejected.count) of 3, generations unchanged, still serving",
            target: "3 of 3",
            rejected.count == 3 && unchanged && serving
        )
        version = try sql("SELECT scoped_set_setting('catalog.repository', '\"sqlite\"')")
        after = delays(until: version, after: .now, bound: .seconds(3))
        result.check(
            "the next valid change applied in \(worst(after))",
            target: "< 1000 ms",
            after.allSatisfy { $0 != nil && $0! < .seconds(1) }
        )

        // The cluster restarted: a change committed once it is back converges everywhere.
        try cluster.restartBlocking(mode: "fast")
        version = try sql("SELECT scoped_set_setting('shutdown.closeTimeout', '6')")
        after = delays(until: version, after: .now, bound: .seconds(10))
        result.check(
            "after a restart, a change committed converged in \(worst(after))",
            target: "< 2000 ms",
            after.allSatisfy { $0 != nil && $0! < .seconds(2) }
        )

        // The cluster unreachable: every instance keeps its last good version, and says so.
        let outage = suite.scaled(short: 5, full: 30)
        try cluster.stopBlocking(mode: "immediate")
        Thread.sleep(forTimeInterval: Double(outage))
        let kept = ports.allSatisfy { port in
            let settings = Settings.read(port: port)
            return settings?.version == version && settings?.listening == false
        }
        let healthy = ports.allSatisfy { port in
            (try? HTTPConnection(port: port).perform(HTTPRequest("GET", "/health")).status) == 200
        }
        result.check(
            "database down \(outage) s: last good version kept and not listening on 3 of 3, /health 200",
            target: "yes",
            kept && healthy
        )
        try cluster.startAgainBlocking()
        version = try sql("SELECT scoped_set_setting('shutdown.closeTimeout', '7')")
        after = delays(until: version, after: .now, bound: .seconds(10))
        result.check(
            "back up: a change committed converged in \(worst(after))",
            target: "< 2000 ms",
            after.allSatisfy { $0 != nil && $0! < .seconds(2) }
        )
        return result
    }

    /// `/debug/stats`'s `settings`.
    struct Settings: Decodable {
        var version: Int
        var listening: Bool
        var rejectedVersion: Int?

        private struct Statistics: Decodable {
            var settings: Settings?
            var generation: Int
        }

        static func read(port: Int) -> Settings? {
            guard let response = try? HTTPConnection(port: port, timeout: 5).perform(HTTPRequest("GET", "/debug/stats"))
            else { return nil }
            return (try? response.json(Statistics.self))?.settings
        }

        static func generation(port: Int) -> Int? {
            guard let response = try? HTTPConnection(port: port, timeout: 5).perform(HTTPRequest("GET", "/debug/stats"))
            else { return nil }
            return (try? response.json(Statistics.self))?.generation
        }
    }

    /// The longest of `delays`, or "never" when one instance did not converge.
    private static func worst(_ delays: [Duration?]) -> String {
        delays.contains { $0 == nil }
            ? "never (one instance)" : (delays.compactMap { $0 }.max() ?? .zero).inMilliseconds
    }
}
