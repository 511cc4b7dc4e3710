import Foundation
import Synchronization

/// Writers that `POST /movies` on threads of their own until stopped, recording every answer
/// with when it was asked, and every movie the server acknowledged with 201.
final class WriteLoad: Sendable {
    /// One request's fate.
    struct Answer: Sendable {
        /// When the request was sent.
        var sent: ContinuousClock.Instant
        /// How long its answer took, in seconds.
        var seconds: Double
        /// The HTTP status, or nil when the connection failed or timed out.
        var status: Int?
        /// The JSON error's `code`, for a 4xx or 5xx.
        var code: String?
        /// What went wrong on the connection, for a nil status.
        var failure: String?
    }

    let acknowledged = Mutex<[Int: String]>([:])
    private let answers = Mutex<[Answer]>([])
    private let stopped = Atomic<Bool>(false)
    private let finished = DispatchGroup()

    /// Starts `writers` threads writing to the server on `port`, each request waiting at most
    /// `timeout` seconds for its answer.
    init(port: Int, writers: Int, name: String, timeout: Double = 30) {
        for writer in 0..<writers {
            finished.enter()
            let thread = Thread { [self] in
                write(port: port, writer: writer, name: name, timeout: timeout)
                finished.leave()
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
    }

    private func write(port: Int, writer: Int, name: String, timeout: Double) {
        var connection: HTTPConnection?
        var number = 0
        while !stopped.load(ordering: .relaxed) {
            number += 1
            let title = "\(name)-\(writer)-\(number)"
            let sent = ContinuousClock.now
            var answer = Answer(sent: sent, seconds: 0)
            do {
                if connection == nil { connection = try HTTPConnection(port: port, timeout: timeout) }
                let response = try connection!
                    .perform(HTTPRequest("POST", "/movies", json: #"{"title":"\#(title)","year":2002}"#))
                answer.status = response.status
                if response.status == 201, let movie = try? response.json(Movie.self) {
                    acknowledged.withLock { $0[movie.id] = movie.title }
                } else {
                    answer.code = (try? response.json(ErrorBody.self))?.error.code
                }
            } catch {
                answer.failure = "\(error)"
                connection = nil
                Thread.sleep(forTimeInterval: 0.01)
            }
            answer.seconds = (ContinuousClock.now - sent).inSeconds
            answers.withLock { $0.append(answer) }
        }
    }

    /// Stops the writers and waits for their last requests.
    func stop() {
        stopped.store(true, ordering: .relaxed)
        finished.wait()
    }

    /// Every answer so far.
    var all: [Answer] { answers.withLock { $0 } }

    /// The first request sent at or after `instant` that was acknowledged, if any.
    func firstAcknowledged(sentAfter instant: ContinuousClock.Instant) -> Answer? {
        all.filter { $0.sent >= instant && $0.status == 201 }.min { $0.sent < $1.sent }
    }

    /// How many acknowledged writes `stored` lacks or holds with another title.
    func missing(from stored: [Int: String]) -> Int {
        acknowledged.withLock { $0.filter { stored[$0.key] != $0.value }.count }
    }

    /// Counts of the answers by what they were: `201`, `503 database_unavailable`, `no answer`.
    func outcomes() -> [String: Int] {
        var counts: [String: Int] = [:]
        for answer in all {
            let key =
                switch answer.status {
                case nil: "no answer"
                case 201: "201"
                case let status?: "\(status) \(answer.code ?? "?")"
                }
            counts[key, default: 0] += 1
        }
        return counts
    }

    /// ``outcomes()`` as one line, most frequent first.
    func outcomeLine() -> String {
        outcomes().sorted { $0.value > $1.value }.map { "\($0.value.grouped)× \($0.key)" }.joined(separator: ", ")
    }
}

/// The body of an API error: `{"error": {"code": …}}`.
struct ErrorBody: Decodable {
    struct Detail: Decodable { var code: String }
    var error: Detail
}

/// Asks `GET /health` every `interval` on a thread of its own until stopped, and records how
/// long each answer took; a request that fails counts as a failure.
final class HealthProbe: Sendable {
    private let latencies = Tally()
    private let answers = Atomic<Int>(0)
    private let failures = Mutex<[String]>([])
    private let stopped = Atomic<Bool>(false)
    private let finished = DispatchGroup()

    init(port: Int, interval: Double = 0.05, timeout: Double = 10) {
        finished.enter()
        let thread = Thread { [self] in
            var connection: HTTPConnection?
            while !stopped.load(ordering: .relaxed) {
                let sent = ContinuousClock.now
                do {
                    if connection == nil { connection = try HTTPConnection(port: port, timeout: timeout) }
                    let response = try connection!.perform(HTTPRequest("GET", "/health"))
                    if response.status != 200 { failures.withLock { $0.append("status \(response.status)") } }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                    connection = nil
                }
                latencies.record(latency: (ContinuousClock.now - sent).inSeconds)
                answers.add(1, ordering: .relaxed)
                Thread.sleep(forTimeInterval: interval)
            }
            finished.leave()
        }
        thread.start()
    }

    func stop() {
        stopped.store(true, ordering: .relaxed)
        finished.wait()
    }

    var count: Int { answers.load(ordering: .relaxed) }
    var failed: [String] { failures.withLock { $0 } }

    /// The latency at `quantile` (0...1), in milliseconds.
    func latency(_ quantile: Double) -> Double { latencies.latency(quantile) }
}
