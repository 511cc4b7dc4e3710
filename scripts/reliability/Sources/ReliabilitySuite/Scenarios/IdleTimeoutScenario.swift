import Foundation
import Synchronization

/// 11. Slow clients: many connections each send half a request header and then nothing. The
/// server's idle timeout (`http.idleTimeout`, 2 s here) must close every one of them within
/// the bound, while `/health` keeps answering on fresh connections the whole time.
enum IdleTimeoutScenario {
    /// The idle timeout the server runs with, and how late a close may come after it.
    static let bound = 2.0
    static let slack = 1.0

    static func run(_ suite: SuiteOptions) async throws -> ScenarioResult {
        var result = ScenarioResult("idle-timeout")
        let server = try ServerProcess(
            suite,
            profile: "test",
            database: suite.databaseFile("idle"),
            environment: ["HTTP_IDLE_TIMEOUT": String(bound)]
        )
        defer { server.stop() }
        let count = suite.scaled(short: 300, full: 1_500)
        let clients = SlowClients()
        let watcher = Thread { clients.watch(until: count) }
        watcher.start()
        for _ in 0..<count {
            let connection = try HTTPConnection(port: server.port, timeout: 5)
            try connection.send(Array("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ".utf8))
            clients.add(connection)
        }
        var healthOK = 0
        var healthFailed = 0
        var healthSlowest = 0.0
        let deadline = ContinuousClock.now + .seconds(bound + slack + 2)
        while ContinuousClock.now < deadline && !clients.allClosed(count) {
            let asked = ContinuousClock.now
            if let connection = try? HTTPConnection(port: server.port, timeout: 5),
                let response = try? connection.perform(HTTPRequest("GET", "/health")), response.status == 200
            {
                healthOK += 1
            } else {
                healthFailed += 1
            }
            healthSlowest = max(healthSlowest, (ContinuousClock.now - asked).inSeconds)
            try await Task.sleep(for: .milliseconds(100))
        }
        clients.stop()
        let closed = clients.closedAfter
        let inBound = closed.filter { $0 <= bound + slack }.count
        result.check(
            "\(inBound)/\(count) half-open connections closed within \(bound) s + \(slack) s",
            target: "all",
            inBound == count
        )
        let early = closed.filter { $0 < bound * 0.9 }.count
        result.check("\(early) closed before the bound", target: "0", early == 0)
        result.report(String(format: "latest close %.2f s after its half header", closed.max() ?? .nan))
        result.check(
            "/health \(healthOK) answered, \(healthFailed) failed",
            target: "0 failed",
            healthFailed == 0 && healthOK > 0
        )
        result.report(String(format: "slowest /health %.0f ms", healthSlowest * 1000))
        result.check("server still running", target: "running", server.isRunning)
        return result
    }
}

/// The slow connections and when the server closed each, watched every 10 ms from a thread of their own.
///
/// `@unchecked Sendable`: the connections are only touched under `state`'s lock.
private final class SlowClients: @unchecked Sendable {
    private struct Client {
        let connection: HTTPConnection
        let sent: ContinuousClock.Instant
        var closedAfter: Double?
    }

    private let state = Mutex<(clients: [Client], stopped: Bool)>(([], false))

    func add(_ connection: HTTPConnection) {
        state.withLock { $0.clients.append(Client(connection: connection, sent: .now, closedAfter: nil)) }
    }

    /// Seconds from each closed connection's half header to its close.
    var closedAfter: [Double] { state.withLock { $0.clients.compactMap(\.closedAfter) } }

    func allClosed(_ count: Int) -> Bool {
        state.withLock { $0.clients.count == count && $0.clients.allSatisfy { $0.closedAfter != nil } }
    }

    func stop() { state.withLock { $0.stopped = true } }

    func watch(until count: Int) {
        while !state.withLock({ $0.stopped }) && !allClosed(count) {
            state.withLock { state in
                let now = ContinuousClock.now
                for index in state.clients.indices where state.clients[index].closedAfter == nil {
                    if state.clients[index].connection.isClosedByPeer {
                        state.clients[index].closedAfter = (now - state.clients[index].sent).inSeconds
                    }
                }
            }
            Thread.sleep(forTimeInterval: 0.01)
        }
    }
}
