import Foundation
import Synchronization
import ScopedTestSupport

/// 22. Reads on PostgreSQL when the database misbehaves: 8 readers loop on `GET /movies/1`
/// (each statement on its own, on the read client) and `GET /movies/export` (one
/// `REPEATABLE READ READ ONLY` snapshot, whose `COMMIT` is sent after the response and not
/// waited for) beside 4 writers, while every PostgreSQL process is stopped (SIGSTOP) for 6
/// seconds (3 in short mode) and then the cluster is stopped at once (`-m immediate`) and
/// started again. Every request is answered, 200/201 or a documented 503, within the deadlines;
/// a read-only `COMMIT` the freeze or the stop caught is counted and its connection returned
/// (`failedReadOnlyCommits`, 0 leased afterwards); reads and writes resume; nothing
/// acknowledged is lost.
enum PostgresReadsScenario {
    static func run(_ suite: SuiteOptions) throws -> ScenarioResult {
        let (cluster, store, server) = try PostgresFaults.start(suite, name: "pg-reads")
        var result = ScenarioResult("pg-reads")
        defer {
            try? cluster.signalServer(SIGCONT)
            server.stop()
        }
        let freeze = Double(suite.scaled(short: 3, full: 6))
        let writes = WriteLoad(port: server.port, writers: 4, name: "reads")
        let reads = ReadAndExportLoad(port: server.port, readers: 8)
        Thread.sleep(forTimeInterval: 1)
        try cluster.signalServer(SIGSTOP)
        Thread.sleep(forTimeInterval: freeze)
        try cluster.signalServer(SIGCONT)
        let thawed = ContinuousClock.now
        _ = eventually(timeout: .seconds(12)) { reads.firstSucceeded(sentAfter: thawed) != nil }
        try cluster.stopBlocking(mode: "immediate")
        Thread.sleep(forTimeInterval: 1)
        try cluster.startAgainBlocking()
        let back = ContinuousClock.now
        _ = eventually(timeout: .seconds(12)) { reads.firstSucceeded(sentAfter: back) != nil }
        Thread.sleep(forTimeInterval: 1)
        reads.stop()
        writes.stop()
        result.report("8 readers, 4 writers; every PostgreSQL process stopped \(Int(freeze)) s, then an immediate stop")
        let answers = reads.all
        let slowest = answers.map(\.seconds).max() ?? 0
        result.check(
            "\(answers.count.grouped) reads: \(reads.outcomeLine()); slowest \(String(format: "%.2f", slowest)) s",
            target: "every one answered within \(PostgresFaults.answerBound) s",
            answers.allSatisfy { $0.status != nil } && slowest <= PostgresFaults.answerBound
        )
        let unexpected = answers.filter { answer in
            answer.status != 200 && !PostgresFaults.refusals.contains("\(answer.status ?? 0) \(answer.code ?? "?")")
                && !answer.cut
        }
        result.check(
            "reads answered other than 200 or a documented 503: \(unexpected.count)",
            target: "0",
            unexpected.isEmpty
        )
        for (instant, event) in [(thawed, "the thaw"), (back, "the restart")] {
            let first = reads.firstSucceeded(sentAfter: instant)
            result.check(
                "reads served again \(first.map { String(format: "%.1f", ($0.sent - instant).inSeconds) } ?? "never") s after \(event)",
                target: "≤ 10 s",
                first.map { ($0.sent - instant) <= .seconds(10) } ?? false
            )
        }
        result.checkAnswers(of: writes, within: PostgresFaults.answerBound, allowed: PostgresFaults.refusals)
        let missing = writes.missing(from: try store.movieTitles())
        let acknowledged = writes.acknowledged.withLock { $0.count }
        result.check("acknowledged writes missing \(missing) of \(acknowledged.grouped)", target: "0", missing == 0)
        result.checkNothingHeld(by: server)
        let failedCommits = (try? ServerStatistics.read(port: server.port))?.database.failedReadOnlyCommits
        result.check(
            "read-only COMMITs failed after their response, counted: \(failedCommits.map(String.init) ?? "not reported")",
            target: "counted, none left leased",
            failedCommits != nil
        )
        result.checkStopsOnSIGTERM(server, within: .seconds(12))
        return result
    }
}

/// Readers that alternate `GET /movies/1` and `GET /movies/export` on threads of their own
/// until stopped, recording every answer; an export whose body ended before its last line
/// (the database went away mid-stream) is recorded as cut.
final class ReadAndExportLoad: Sendable {
    struct Answer: Sendable {
        var sent: ContinuousClock.Instant
        var seconds: Double
        var status: Int?
        var code: String?
        /// A 200 export whose body ended without its last newline.
        var cut = false
    }

    private let answers = Mutex<[Answer]>([])
    private let stopped = Atomic<Bool>(false)
    private let finished = DispatchGroup()

    init(port: Int, readers: Int, timeout: Double = 30) {
        for reader in 0..<readers {
            finished.enter()
            let thread = Thread { [self] in
                read(port: port, first: reader % 2, timeout: timeout)
                finished.leave()
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
    }

    private func read(port: Int, first: Int, timeout: Double) {
        var connection: HTTPConnection?
        var number = first
        while !stopped.load(ordering: .relaxed) {
            number += 1
            let path = number % 2 == 0 ? "/movies/1" : "/movies/export"
            let sent = ContinuousClock.now
            var answer = Answer(sent: sent, seconds: 0)
            do {
                if connection == nil { connection = try HTTPConnection(port: port, timeout: timeout) }
                let response = try connection!.perform(HTTPRequest("GET", path))
                answer.status = response.status
                if response.status != 200 {
                    answer.code = (try? response.json(ErrorBody.self))?.error.code
                } else if path == "/movies/export" {
                    answer.cut = response.body.last != 10
                }
            } catch {
                // A chunked body the server ended early: the export was cut.
                answer.status = path == "/movies/export" ? 200 : nil
                answer.cut = path == "/movies/export"
                connection = nil
                Thread.sleep(forTimeInterval: 0.01)
            }
            answer.seconds = (ContinuousClock.now - sent).inSeconds
            answers.withLock { $0.append(answer) }
        }
    }

    func stop() {
        stopped.store(true, ordering: .relaxed)
        finished.wait()
    }

    var all: [Answer] { answers.withLock { $0 } }

    /// The first request sent at or after `instant` that got its 200, if any.
    func firstSucceeded(sentAfter instant: ContinuousClock.Instant) -> Answer? {
        all.filter { $0.sent >= instant && $0.status == 200 && !$0.cut }.min { $0.sent < $1.sent }
    }

    /// The answers by kind, most frequent first (`200`, `200 cut`, `503 database_timeout`, …).
    func outcomeLine() -> String {
        var counts: [String: Int] = [:]
        for answer in all {
            let key =
                switch answer.status {
                case nil: "no answer"
                case 200: answer.cut ? "200 cut" : "200"
                case let status?: "\(status) \(answer.code ?? "?")"
                }
            counts[key, default: 0] += 1
        }
        return counts.sorted { $0.value > $1.value }.map { "\($0.value.grouped)× \($0.key)" }.joined(separator: ", ")
    }
}
