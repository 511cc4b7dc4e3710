#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization

/// 8. Graceful shutdown: SIGTERM while clients send 500 writes a second. Every request the
/// server accepted must be answered in full; it must exit 0 within `shutdown.timeout`.
///
/// On either backend. So that the drain has work to wait for, a second process takes the write
/// lock for one second just before the signal: the writes in flight at SIGTERM wait for it, and are answered
/// during the drain.
///
/// Every request is a write with a unique title, so that "accepted" is decidable: a request is
/// accepted when it was answered or when its row is in the file. A request on a connection the
/// server closed before reading it, or refused by a closed listener, was not accepted; those
/// are counted and reported.
enum GracefulShutdownScenario {
    static let drainBound = 10

    static func run(_ suite: SuiteOptions, on backend: Store.Backend) async throws -> ScenarioResult {
        let store = try Store(backend, suite: suite, name: "shutdown")
        var result = ScenarioResult(store.scenarioName("shutdown"))
        let server = try store.startServer(
            suite,
            profile: "production",
            environment: ["SHUTDOWN_TIMEOUT": String(drainBound)]
        )
        let threads = 25
        let perThread = 20.0  // requests a second: 25 × 20 = 500
        let tally = Tally()
        let unanswered = Mutex<[String]>([])
        let start = ContinuousClock.now
        let loadFor = Duration.seconds(2)
        let signalled = Atomic<Bool>(false)
        let exitStatus = Mutex<Int32?>(nil)
        let exitedAfter = Mutex<Duration?>(nil)
        let lockHolder = Mutex<Result<Process, any Error>?>(nil)
        let watcher = Thread {
            Thread.sleep(forTimeInterval: 1.8)
            lockHolder.withLock { $0 = Result { try store.holdWriteLock(suite, seconds: 1) } }
            Thread.sleep(forTimeInterval: 0.2)
            server.signal(SIGTERM)
            signalled.store(true, ordering: .relaxed)
            let status = server.waitForExit(timeout: .seconds(60))
            exitStatus.withLock { $0 = status }
            if let at = server.signalledAt { exitedAfter.withLock { $0 = ContinuousClock.now - at } }
        }
        watcher.start()
        onThreads(threads) { thread in
            var connection: HTTPConnection?
            var number = 0
            let phase = Double(thread) / Double(threads) / perThread
            while true {
                let due = start + .milliseconds(Int((phase + Double(number) / perThread) * 1000))
                let now = ContinuousClock.now
                if due > now { Thread.sleep(forTimeInterval: (due - now).inSeconds) }
                if signalled.load(ordering: .relaxed) && !server.isRunning { break }
                if ContinuousClock.now - start > loadFor + .seconds(drainBound + 5) { break }
                number += 1
                let title = "shutdown-\(thread)-\(number)"
                let request = HTTPRequest("POST", "/movies", json: #"{"title":"\#(title)","year":2003}"#)
                do {
                    if connection == nil { connection = try HTTPConnection(port: server.port, timeout: 30) }
                } catch {
                    tally.add("refused")
                    continue
                }
                do {
                    let sent = ContinuousClock.now
                    let response = try connection!.perform(request)
                    tally.add(
                        response.status == 201 ? "answered" : "failed",
                        example: "\(title): \(response.status) \(response.text)"
                    )
                    if response.status == 201, let signalled = server.signalledAt, sent < signalled {
                        tally.add("drained")
                    }
                    if response.header("Connection")?.lowercased() == "close" { connection = nil }
                } catch HTTPClientError.closed(let received) where received == 0 {
                    unanswered.withLock { $0.append(title) }
                    connection = nil
                } catch {
                    tally.add("failed", example: "\(title): \(error)")
                    connection = nil
                }
            }
        }
        watcher.waitUntilFinished()
        guard case .success(let holder) = lockHolder.withLock({ $0 }) else {
            throw SuiteError("the lock holder did not start")
        }
        holder.waitUntilExit()
        let stored = Set(try store.movieTitles().values)
        let lost = unanswered.withLock { $0.filter(stored.contains) }
        let notAccepted = unanswered.withLock { $0.count } - lost.count
        let failed = tally["failed"] + lost.count
        result.report(
            "\(tally["answered"].grouped) answered, \(tally["drained"]) of them in flight at SIGTERM; not accepted: \(notAccepted) closed before being read, \(tally["refused"]) refused after the listener closed"
        )
        result.check("accepted requests that failed \(failed)", target: "0", failed == 0)
        if failed > 0 {
            result.report("first: \(lost.first.map { "\($0) stored but unanswered" } ?? tally.example("failed"))")
        }
        let status = exitStatus.withLock { $0 }
        let seconds = exitedAfter.withLock { $0 }.map(\.inSeconds) ?? .infinity
        result.check("exit code \(status.map(String.init) ?? "none")", target: "0", status == 0)
        result.check(
            String(format: "exit %.2f s after SIGTERM", seconds),
            target: "≤ \(drainBound) s (shutdown.timeout)",
            seconds <= Double(drainBound)
        )
        return result
    }
}

extension Thread {
    func waitUntilFinished() {
        while !isFinished { Thread.sleep(forTimeInterval: 0.01) }
    }
}
