import Foundation
import Synchronization

/// 15. A close that never returns: `GET /debug/hanging-close` builds a request-scoped service
/// whose close waits for ever (its key's close timeout is 1 s). Every such request is answered,
/// 503 `close_timeout` (the work's outcome is unknown), once the close is abandoned; its scope
/// ends, and the log names the service; then SIGTERM, with
/// such requests in flight, still exits 0 within the profile's `shutdown.timeout`.
enum CloseHangScenario {
    static func run(_ suite: SuiteOptions) throws -> ScenarioResult {
        var result = ScenarioResult("close-hang")
        let server = try ServerProcess(suite, profile: "test", database: suite.databaseFile("close-hang"))
        defer { server.stop() }
        let requests = suite.scaled(short: 20, full: 200)
        let latencies = Mutex<[Double]>([])
        let failures = Mutex<[String]>([])
        onThreads(4) { client in
            for _ in 0..<(requests / 4) {
                let sent = ContinuousClock.now
                do {
                    let response = try HTTPConnection(port: server.port, timeout: 10)
                        .perform(HTTPRequest("GET", "/debug/hanging-close"))
                    if response.status != 503 || !response.text.contains("close_timeout") {
                        failures.withLock { $0.append("\(response.status) \(response.text)") }
                    }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
                latencies.withLock { $0.append((ContinuousClock.now - sent).inSeconds) }
            }
        }
        let slowest = latencies.withLock { $0.max() ?? 0 }
        result.check(
            "\(requests) requests whose close never returns: \(requests - failures.withLock(\.count)) answered 503 close_timeout, slowest \(String(format: "%.2f", slowest)) s",
            target: "all, within 2 s",
            failures.withLock(\.isEmpty) && slowest <= 2
        )
        if let failure = failures.withLock(\.first) { result.report("first failure: \(failure)") }
        result.checkNothingHeld(by: server)
        let reported = server.log.components(separatedBy: "\n").filter { $0.contains("hangingCloseProbe") }.count
        result.check(
            "log lines naming the abandoned close of hangingCloseProbe: \(reported)",
            target: "one per request",
            reported >= requests
        )
        // SIGTERM while four clients keep requesting it.
        let stop = Atomic<Bool>(false)
        let clients = DispatchGroup()
        for _ in 0..<4 {
            clients.enter()
            Thread {
                while !stop.load(ordering: .relaxed) {
                    _ = try? HTTPConnection(port: server.port, timeout: 10)
                        .perform(HTTPRequest("GET", "/debug/hanging-close"))
                }
                clients.leave()
            }
            .start()
        }
        Thread.sleep(forTimeInterval: 0.5)
        result.checkStopsOnSIGTERM(server, within: .seconds(5), while: "with hanging closes in flight")
        stop.store(true, ordering: .relaxed)
        clients.wait()
        return result
    }
}
