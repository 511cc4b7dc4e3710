import Foundation
import Synchronization

/// 7. Writer contention: 200 concurrent writers while a second process holds the database's
/// write lock for 2 seconds: `BEGIN IMMEDIATE` on SQLite, or, with `on: .postgres`,
/// `LOCK TABLE movies IN EXCLUSIVE MODE` from `psql`. No 500s; every acknowledged write
/// present; p99 latency reported.
enum WriterContentionScenario {
    static func run(_ suite: SuiteOptions, on backend: Store.Backend) async throws -> ScenarioResult {
        let store = try Store(backend, suite: suite, name: "contention")
        var result = ScenarioResult(store.scenarioName("contention"))
        let server = try store.startServer(suite, profile: "production")
        defer { server.stop() }
        let duration = Double(suite.scaled(short: 5, full: 30))
        let writers = 200
        let tally = Tally()
        let acknowledged = Mutex<[Int: String]>([:])
        let holder = Mutex<Process?>(nil)
        let lockError = Mutex<String?>(nil)
        let start = Date()
        let lockThread = Thread {
            Thread.sleep(forTimeInterval: min(1, duration / 3))
            do {
                let process = try store.holdWriteLock(suite, seconds: 2)
                holder.withLock { $0 = process }
            } catch {
                lockError.withLock { $0 = "\(error)" }
            }
        }
        lockThread.start()
        onThreads(writers) { writer in
            var connection: HTTPConnection?
            var number = 0
            while Date().timeIntervalSince(start) < duration {
                number += 1
                let title = "contention-\(writer)-\(number)"
                let sent = Date()
                do {
                    if connection == nil { connection = try HTTPConnection(port: server.port) }
                    let response = try connection!
                        .perform(HTTPRequest("POST", "/movies", json: #"{"title":"\#(title)","year":2001}"#))
                    tally.record(latency: Date().timeIntervalSince(sent))
                    switch response.status {
                    case 201:
                        tally.add("created")
                        if let movie = try? response.json(Movie.self) {
                            acknowledged.withLock { $0[movie.id] = movie.title }
                        }
                    case 503: tally.add("busy")
                    case 500...: tally.add("server errors", example: "\(response.status) \(response.text)")
                    default: tally.add("other", example: "\(response.status) \(response.text)")
                    }
                } catch {
                    tally.add("errors", example: "\(error)")
                    connection = nil
                }
            }
        }
        if let lockError = lockError.withLock({ $0 }) { throw SuiteError(lockError) }
        guard let process = holder.withLock({ $0 }) else { throw SuiteError("the lock holder never started") }
        process.waitUntilExit()
        let stored = try store.movieTitles()
        let missing = acknowledged.withLock { $0.filter { stored[$0.key] != $0.value }.count }
        result.report(
            "\(writers) writers for \(Int(duration)) s, another process holding the write lock for 2 s: \(tally["created"].grouped) created, \(tally["busy"]) answered 503"
        )
        result.check("500 responses \(tally["server errors"])", target: "0", tally["server errors"] == 0)
        result.check(
            "other failures \(tally["other"] + tally["errors"])",
            target: "0",
            tally["other"] + tally["errors"] == 0
        )
        result.report(
            String(
                format: "latency p50 %.0f ms, p99 %.0f ms, max %.0f ms",
                tally.latency(0.5),
                tally.latency(0.99),
                tally.latency(1)
            )
        )
        result.check("acknowledged writes missing \(missing)", target: "0", missing == 0)
        result.check(
            "lock holder exit \(process.terminationStatus)",
            target: "0 (it held and released the lock)",
            process.terminationStatus == 0
        )
        for name in ["server errors", "other", "errors"] where tally[name] > 0 {
            result.report("first \(name): \(tally.example(name))")
        }
        return result
    }
}
