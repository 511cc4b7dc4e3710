import Foundation
import Synchronization

/// Checks that end the fault scenarios: the server holds nothing once the load has stopped,
/// and SIGTERM still ends it cleanly and in time.
extension ScenarioResult {
    /// Polls `/debug/stats` for up to 10 seconds until no other scope is open and no
    /// connection leased, and records what it last saw.
    mutating func checkNothingHeld(by server: ServerProcess) {
        var statistics: ServerStatistics?
        let drained = eventually(timeout: .seconds(10)) {
            statistics = try? ServerStatistics.read(port: server.port)
            return statistics.map { $0.otherOpenScopes == 0 && $0.database.leased == 0 } ?? false
        }
        check(
            "afterwards \(statistics.map { "\($0.otherOpenScopes) open scopes, \($0.database.leased) leased connections" } ?? "no /debug/stats")",
            target: "0 / 0",
            drained
        )
    }

    /// Sends SIGTERM and checks that the server exits 0 within `bound`.
    mutating func checkStopsOnSIGTERM(_ server: ServerProcess, within bound: Duration, while situation: String = "") {
        server.signal(SIGTERM)
        let status = server.waitForExit(timeout: bound + .seconds(30))
        let took = ContinuousClock.now - (server.signalledAt ?? .now)
        check(
            "SIGTERM\(situation.isEmpty ? "" : " \(situation)"): exit \(status.map(String.init) ?? "none") after \(String(format: "%.2f", took.inSeconds)) s",
            target: "exit 0 within \(Int(bound.inSeconds)) s",
            status == 0 && took <= bound
        )
    }

    /// Checks that the first acknowledged write sent after `instant` came within 10 seconds.
    mutating func checkWritesResume(_ load: WriteLoad, after instant: ContinuousClock.Instant, _ event: String) {
        guard let first = load.firstAcknowledged(sentAfter: instant) else {
            check("writes after \(event): none acknowledged", target: "within 10 s", false)
            return
        }
        let seconds = (first.sent - instant).inSeconds + first.seconds
        check(
            String(format: "writes acknowledged again %.1f s after \(event)", seconds),
            target: "≤ 10 s",
            seconds <= 10
        )
    }

    /// Checks that every request of `load` was answered within `bound` seconds, and only with
    /// 201 or one of `allowed` (`"503 database_unavailable"`, say).
    mutating func checkAnswers(of load: WriteLoad, within bound: Double, allowed: Set<String>) {
        let answers = load.all
        let slowest = answers.map(\.seconds).max() ?? 0
        let unanswered = answers.filter { $0.status == nil }
        check(
            "\(answers.count.grouped) requests: \(load.outcomeLine()); slowest \(String(format: "%.2f", slowest)) s",
            target: "every one answered within \(bound) s",
            unanswered.isEmpty && slowest <= bound
        )
        if let failure = unanswered.first?.failure { report("first unanswered: \(failure)") }
        let unexpected = load.outcomes().filter { $0.key != "201" && !allowed.contains($0.key) }
        check(
            "answers other than 201 or \(allowed.sorted().joined(separator: " / ")): \(unexpected.values.reduce(0, +))",
            target: "0",
            unexpected.isEmpty
        )
    }

    /// Checks, once the server has stopped, that every write `load` acknowledged is in the
    /// SQLite file at `path`, and that the file passes `integrity_check`.
    mutating func checkAcknowledgedWrites(of load: WriteLoad, inSQLiteFile path: String) throws {
        let raw = try RawDatabase(path)
        let missing = load.missing(from: try raw.movieTitles())
        let acknowledged = load.acknowledged.withLock { $0.count }
        check("acknowledged writes missing \(missing) of \(acknowledged.grouped)", target: "0", missing == 0)
        let integrity = try raw.integrityCheck()
        check("integrity_check \(integrity)", target: "ok", integrity == "ok")
    }

    /// Checks that `GET /movies/1` (a committed row) and `GET /health` each answered 200 in every
    /// round `rounds` ran, within `bound` seconds, while `situation`.
    mutating func checkReadsAnswer(port: Int, while situation: String, within bound: Double, rounds: () -> Bool) {
        var reads = 0
        var failures: [String] = []
        var slowest = 0.0
        while rounds() {
            for path in ["/movies/1", "/health"] {
                let sent = ContinuousClock.now
                do {
                    let response = try HTTPConnection(port: port, timeout: 10).perform(HTTPRequest("GET", path))
                    if response.status == 200 { reads += 1 } else { failures.append("\(path) \(response.status)") }
                } catch {
                    failures.append("\(path): \(error)")
                }
                slowest = max(slowest, (ContinuousClock.now - sent).inSeconds)
            }
        }
        check(
            "\(situation): \(reads)/\(reads + failures.count) reads of a committed row and /health answered 200, slowest \(String(format: "%.2f", slowest)) s",
            target: "all, each within \(bound) s",
            failures.isEmpty && reads > 0 && slowest <= bound
        )
        if let failure = failures.first { report("first failed read: \(failure)") }
    }
}
