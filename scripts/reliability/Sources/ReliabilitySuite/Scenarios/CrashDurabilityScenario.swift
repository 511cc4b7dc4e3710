import Foundation
import Synchronization

/// 3. Crash mid-request: sixteen clients (twelve writers, four reading the catalog's streamed
/// export) keep the server busy when it (production profile: `synchronous=FULL` on SQLite) is
/// killed with SIGKILL at a random moment, in the middle of requests and of streamed
/// responses; it is restarted on the same database. Writers record a movie only once the
/// server answered 201. Every acknowledged write must be there; the database sound and left
/// unlocked (SQLite: `integrity_check` passes, the write lock is free and a full checkpoint
/// completes; PostgreSQL: the killed server left no transaction open); and each restart
/// serves within 5 seconds of its launch.
enum CrashDurabilityScenario {
    static let writers = 12
    static let streamers = 4

    static func run(_ suite: SuiteOptions, on backend: Store.Backend) async throws -> ScenarioResult {
        let store = try Store(backend, suite: suite, name: "crash")
        var result = ScenarioResult(store.scenarioName("crash-mid-request"))
        let cycles = suite.scaled(short: 5, full: 50)
        let acknowledged = Mutex<[Int: String]>([:])
        let streams = Atomic<Int>(0)
        let cutStreams = Atomic<Int>(0)
        var missing = 0
        var wrong = 0
        var unsound: [String] = []
        var slowestRestart = Duration.zero
        for cycle in 0..<cycles {
            let launched = ContinuousClock.now
            let server = try store.startServer(suite, profile: "production")
            if cycle > 0 { slowestRestart = max(slowestRestart, ContinuousClock.now - launched) }
            let stop = Atomic<Bool>(false)
            let killer = Thread {
                Thread.sleep(forTimeInterval: Double.random(in: 0.2...1.5))
                server.signal(SIGKILL)
                stop.store(true, ordering: .relaxed)
            }
            killer.start()
            onThreads(writers + streamers) { client in
                var connection: HTTPConnection?
                var number = 0
                while !stop.load(ordering: .relaxed) {
                    number += 1
                    do {
                        if connection == nil { connection = try HTTPConnection(port: server.port, timeout: 10) }
                        if client >= writers {
                            let response = try connection!.perform(HTTPRequest("GET", "/movies/export"))
                            if response.status == 200 { streams.add(1, ordering: .relaxed) }
                            continue
                        }
                        let title = "crash-\(cycle)-\(client)-\(number)"
                        let response = try connection!
                            .perform(
                                HTTPRequest("POST", "/movies", json: #"{"title":"\#(title)","year":1999}"#)
                            )
                        guard response.status == 201, let movie = try? response.json(Movie.self) else { continue }
                        acknowledged.withLock { $0[movie.id] = movie.title }
                    } catch {
                        // Killed mid-request: this write was never acknowledged, this stream never ended.
                        if client >= writers { cutStreams.add(1, ordering: .relaxed) }
                        connection = nil
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
        let launched = ContinuousClock.now
        let server = try store.startServer(suite, profile: "production")
        defer { server.stop() }
        slowestRestart = max(slowestRestart, ContinuousClock.now - launched)
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
        result.report(
            "\(cycles) SIGKILL cycles under \(writers) writers and \(streamers) streaming readers, "
                + "\(total.grouped) acknowledged writes, \(streams.load(ordering: .relaxed).grouped) exports completed and "
                + "\(cutStreams.load(ordering: .relaxed).grouped) cut by the kill"
        )
        result.check("acknowledged writes missing \(missing)", target: "0", missing == 0 && total > 0)
        result.check("acknowledged writes changed \(wrong)", target: "0", wrong == 0)
        result.check(
            "\(backend == .sqlite ? "integrity_check ok, no lock left" : "no transaction left open") in "
                + "\(cycles - unsound.count)/\(cycles) cycles\(unsound.isEmpty ? "" : ": \(unsound.prefix(3))")",
            target: "every cycle",
            unsound.isEmpty
        )
        result.check(
            "slowest restart served /health after \(String(format: "%.2f", slowestRestart.inSeconds)) s",
            target: "≤ 5 s",
            slowestRestart <= .seconds(5)
        )
        return result
    }
}
