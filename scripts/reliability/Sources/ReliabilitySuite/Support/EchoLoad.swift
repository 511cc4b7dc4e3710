import Foundation
import Synchronization

/// Many keep-alive connections, each sending requests that carry their own request ID and
/// their own `X-Catalog` override, and checking that every answer names that request only.
struct EchoLoad {
    /// The servers' ports; connections are spread over them in turn.
    var ports: [Int]
    var requests: Int
    var connections: Int
    /// The type the server's own repository reports, where no override selects the fixture.
    var repository = "SQLiteMovieRepository"
    /// The share of requests whose client disconnects at a random moment.
    var disconnectRate = 0.0
    /// The share of requests that write a movie instead of asking for an echo.
    var writeRate = 0.0

    enum Disconnect: CaseIterable {
        case midHead, midBody, afterRequest, afterPause, midResponse
    }

    /// Runs the load and returns its tally: `completed`, `mismatches`, `errors`,
    /// `disconnects`, and the seconds it took.
    func run() -> (Tally, seconds: Double) {
        let tally = Tally()
        let next = Atomic<Int>(0)
        let start = ContinuousClock.now
        onThreads(connections) { thread in
            var connection: HTTPConnection?
            while true {
                let number = next.add(1, ordering: .relaxed).oldValue
                guard number < requests else { break }
                let id = "r\(thread)-\(number)-\(UInt32.random(in: 0...UInt32.max))"
                let writes = Double.random(in: 0..<1) < writeRate
                let fixture = !writes && Bool.random()
                var headers = [("X-Request-ID", id)]
                if fixture { headers.append(("X-Catalog", "fixture")) }
                let request =
                    writes
                    ? HTTPRequest("POST", "/movies", headers: headers, json: #"{"title":"load-\#(id)","year":2000}"#)
                    : HTTPRequest("GET", "/debug/echo", headers: headers)
                do {
                    if connection == nil { connection = try HTTPConnection(port: ports[thread % ports.count]) }
                    if Double.random(in: 0..<1) < disconnectRate {
                        try disconnect(connection!, request: request, mode: Disconnect.allCases.randomElement()!)
                        connection = nil
                        tally.add("disconnects")
                        continue
                    }
                    let response = try connection!.perform(request)
                    tally.add("completed")
                    if let problem = check(response, id: id, writes: writes, fixture: fixture) {
                        tally.add("mismatches", example: problem)
                    }
                    if response.header("Connection")?.lowercased() == "close" { connection = nil }
                } catch {
                    tally.add("errors", example: "\(request.method) \(request.path): \(error)")
                    connection = nil
                }
            }
        }
        let elapsed = ContinuousClock.now - start
        return (tally, elapsed.inSeconds)
    }

    /// What is wrong with `response`, or nil when it names request `id` and its override only.
    private func check(_ response: HTTPResponse, id: String, writes: Bool, fixture: Bool) -> String? {
        guard response.header("X-Request-ID") == id else {
            return "\(id): X-Request-ID is \(response.header("X-Request-ID") ?? "missing")"
        }
        if writes {
            guard response.status == 201, response.text.contains("\"title\":\"load-\(id)\"") else {
                return "\(id): POST answered \(response.status) \(response.text)"
            }
            return nil
        }
        guard response.status == 200, let echo = try? response.json(ScopeEcho.self) else {
            return "\(id): echo answered \(response.status) \(response.text)"
        }
        let repository = fixture ? "InMemoryMovieRepository" : self.repository
        let readings = [echo.handler, echo.asyncLet, echo.afterDatabase] + echo.taskGroup
        guard echo.taskGroup.count == 2, echo.database == id,
            readings.allSatisfy({ $0.requestID == id && $0.repository == repository })
        else {
            return "\(id) (\(repository)): read \(response.text)"
        }
        return nil
    }

    /// Sends part or all of `request` and drops the connection at the chosen moment, half of
    /// the time with a TCP reset.
    private func disconnect(_ connection: HTTPConnection, request: HTTPRequest, mode: Disconnect) throws {
        let reset = Bool.random()
        let head = request.head
        switch mode {
        case .midHead:
            try connection.send(Array(head[..<Int.random(in: 1..<head.count)]))
        case .midBody:
            var bytes = head
            if !request.body.isEmpty {
                bytes += request.body[..<Int.random(in: 0..<request.body.count)]
            } else {
                bytes.removeLast(Int.random(in: 1...2))
            }
            try connection.send(bytes)
        case .afterRequest:
            try connection.send(request.bytes)
        case .afterPause:
            try connection.send(request.bytes)
            Thread.sleep(forTimeInterval: Double.random(in: 0..<0.005))
        case .midResponse:
            try connection.send(request.bytes)
            _ = try connection.readSome(Int.random(in: 1...64))
        }
        connection.close(reset: reset)
    }
}
