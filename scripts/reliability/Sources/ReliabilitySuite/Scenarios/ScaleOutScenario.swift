import Foundation
import Synchronization

/// 12. Scale-out: two server instances on one PostgreSQL database, as a catalog that outgrew one
/// machine runs. 64 connections spread over both: every request reads only its own values; a
/// movie written through one instance is read through the other; one instance killed with
/// SIGKILL mid-load loses no acknowledged write while the other keeps serving; and afterwards
/// no connection is left in a transaction, idle or not.
enum ScaleOutScenario {
    static func run(_ suite: SuiteOptions) async throws -> ScenarioResult {
        var result = ScenarioResult("scale-out")
        let store = try Store(.postgres, suite: suite, name: "scale-out")
        // One after the other: the first migrates and seeds, the second finds both done.
        let first = try store.startServer(suite, profile: "development", environment: ["DATABASE_CONNECTIONS": "40"])
        defer { first.stop() }
        let second = try store.startServer(suite, profile: "development", environment: ["DATABASE_CONNECTIONS": "40"])
        defer { second.stop() }

        // Isolation through both instances, with writes.
        let load = EchoLoad(
            ports: [first.port, second.port],
            requests: suite.scaled(short: 6_000, full: 60_000),
            connections: 64,
            repository: store.repositoryType,
            writeRate: 0.1
        )
        let (tally, seconds) = load.run()
        result.report(
            "\(load.requests.grouped) requests over 64 connections to 2 instances in \(String(format: "%.1f", seconds)) s"
        )
        result.check("\(tally["mismatches"]) cross-request mismatches", target: "0", tally["mismatches"] == 0)
        result.check("\(tally["errors"]) failed requests", target: "0", tally["errors"] == 0)
        if tally["mismatches"] > 0 { result.report("first mismatch: \(tally.example("mismatches"))") }
        if tally["errors"] > 0 { result.report("first error: \(tally.example("errors"))") }

        // Written through one instance, read through the other.
        let written = Mutex<[(id: Int, title: String, reader: Int)]>([])
        onThreads(16) { thread in
            let (writer, reader) = thread % 2 == 0 ? (first.port, second.port) : (second.port, first.port)
            guard let connection = try? HTTPConnection(port: writer) else { return }
            for number in 0..<suite.scaled(short: 25, full: 250) {
                let title = "cross-\(thread)-\(number)"
                let request = HTTPRequest("POST", "/movies", json: #"{"title":"\#(title)","year":2001}"#)
                guard let response = try? connection.perform(request), response.status == 201,
                    let movie = try? response.json(Movie.self)
                else { continue }
                written.withLock { $0.append((movie.id, title, reader)) }
            }
        }
        var missing = 0
        for movie in written.withLock({ $0 }) {
            let response = try? HTTPConnection(port: movie.reader).perform(HTTPRequest("GET", "/movies/\(movie.id)"))
            if response?.status != 200 || response?.text.contains(movie.title) != true { missing += 1 }
        }
        let crossCount = written.withLock { $0.count }
        result.check(
            "\(crossCount.grouped) movies written through one instance, missing through the other \(missing)",
            target: "0",
            missing == 0 && crossCount > 0
        )

        // SIGKILL one instance mid-load; the other serves on.
        let acknowledged = Mutex<[Int: String]>([:])
        let survivorFailures = Tally()
        let stop = Atomic<Bool>(false)
        let killer = Thread {
            Thread.sleep(forTimeInterval: 1.0)
            first.signal(SIGKILL)
            Thread.sleep(forTimeInterval: 1.5)
            stop.store(true, ordering: .relaxed)
        }
        killer.start()
        onThreads(32) { thread in
            let port = thread % 2 == 0 ? first.port : second.port
            var connection: HTTPConnection?
            var number = 0
            while !stop.load(ordering: .relaxed) {
                number += 1
                let title = "kill-\(thread)-\(number)"
                do {
                    if connection == nil { connection = try HTTPConnection(port: port, timeout: 10) }
                    let response = try connection!
                        .perform(
                            HTTPRequest("POST", "/movies", json: #"{"title":"\#(title)","year":2002}"#)
                        )
                    guard response.status == 201, let movie = try? response.json(Movie.self) else {
                        if port == second.port { survivorFailures.add("failures", example: "\(response.status)") }
                        continue
                    }
                    acknowledged.withLock { $0[movie.id] = title }
                } catch {
                    connection = nil
                    if port == second.port { survivorFailures.add("failures", example: "\(error)") }
                    if port == first.port { Thread.sleep(forTimeInterval: 0.05) }
                }
            }
        }
        _ = first.waitForExit(timeout: .seconds(10))
        let stored = try store.movieTitles()
        let lost = acknowledged.withLock { $0.filter { stored[$0.key] != $0.value }.count }
        let total = acknowledged.withLock { $0.count }
        result.check(
            "one instance SIGKILLed mid-load: \(total.grouped) acknowledged writes, lost \(lost)",
            target: "0",
            lost == 0 && total > 0
        )
        result.check(
            "failed requests to the surviving instance \(survivorFailures["failures"])",
            target: "0",
            survivorFailures["failures"] == 0
        )
        if survivorFailures["failures"] > 0 { result.report("first: \(survivorFailures.example("failures"))") }

        // No connection left in a transaction: the killed instance's were rolled back by the
        // server, the survivor's returned to its pool.
        let open = try store.openTransactionsSettled()
        result.check(
            "connections in a transaction after the load \(open.count) (\(open.how))",
            target: "0",
            open.count == 0
        )
        return result
    }
}
