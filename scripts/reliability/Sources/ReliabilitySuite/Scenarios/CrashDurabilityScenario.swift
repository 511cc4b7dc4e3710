import Foundation
import Synchronization

/// 3. Crash durability: writers record a movie only once the server answered 201; the server
/// (production profile: `synchronous=FULL` on SQLite) is killed with SIGKILL at a random moment
/// and restarted on the same database. Every acknowledged write must be there, and the database
/// sound: SQLite's file passes `integrity_check`; on PostgreSQL, the killed server left no
/// transaction open.
enum CrashDurabilityScenario {
    static func run(_ suite: SuiteOptions, on backend: Store.Backend) async throws -> ScenarioResult {
        let store = try Store(backend, suite: suite, name: "crash")
        var result = ScenarioResult(store.scenarioName("crash"))
        let cycles = suite.scaled(short: 5, full: 50)
        let acknowledged = Mutex<[Int: String]>([:])
        var missing = 0
        var wrong = 0
        var unsound: [String] = []
        for cycle in 0..<cycles {
            let server = try store.startServer(suite, profile: "production")
            let stop = Atomic<Bool>(false)
            let killer = Thread {
                Thread.sleep(forTimeInterval: Double.random(in: 0.2...1.5))
                server.signal(SIGKILL)
                stop.store(true, ordering: .relaxed)
            }
            killer.start()
            onThreads(8) { writer in
                var connection: HTTPConnection?
                var number = 0
                while !stop.load(ordering: .relaxed) {
                    number += 1
                    let title = "crash-\(cycle)-\(writer)-\(number)"
                    do {
                        if connection == nil { connection = try HTTPConnection(port: server.port, timeout: 10) }
                        let response = try connection!
                            .perform(
                                HTTPRequest("POST", "/movies", json: #"{"title":"\#(title)","year":1999}"#)
                            )
                        guard response.status == 201, let movie = try? response.json(Movie.self) else { continue }
                        acknowledged.withLock { $0[movie.id] = movie.title }
                    } catch {
                        connection = nil  // Killed mid-request: this write was never acknowledged.
                        if !stop.load(ordering: .relaxed) { Thread.sleep(forTimeInterval: 0.01) }
                    }
                }
            }
            guard server.waitForExit(timeout: .seconds(30)) == 128 + SIGKILL else {
                throw SuiteError("cycle \(cycle): the server did not die of SIGKILL")
            }
            // The suite opens the file the way the restarted server will: WAL recovery included.
            let soundness = try store.soundnessAfterCrash()
            if soundness != "ok" { unsound.append("cycle \(cycle): \(soundness)") }
            let stored = try store.movieTitles()
            for (id, title) in acknowledged.withLock({ $0 }) {
                guard let found = stored[id] else {
                    missing += 1
                    continue
                }
                if found != title { wrong += 1 }
            }
        }
        // A last start proves the server comes back on the file and serves what it acknowledged.
        let server = try store.startServer(suite, profile: "production")
        defer { server.stop() }
        let sample = acknowledged.withLock { $0.randomElement() }
        if let sample {
            let response = try HTTPConnection(port: server.port).perform(HTTPRequest("GET", "/movies/\(sample.key)"))
            result.check(
                "restarted server serves movie \(sample.key): \(response.status)",
                target: "200 with its title",
                response.status == 200 && response.text.contains(sample.value)
            )
        }
        let total = acknowledged.withLock { $0.count }
        result.report("\(cycles) SIGKILL cycles, \(total.grouped) acknowledged writes")
        result.check("acknowledged writes missing \(missing)", target: "0", missing == 0 && total > 0)
        result.check("acknowledged writes changed \(wrong)", target: "0", wrong == 0)
        result.check(
            "\(backend == .sqlite ? "integrity_check" : "no transaction left open") ok in \(cycles - unsound.count)/\(cycles) cycles",
            target: "every cycle",
            unsound.isEmpty
        )
        return result
    }
}
