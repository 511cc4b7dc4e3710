import Foundation
import Synchronization
import ScopedTestSupport

/// 13. PostgreSQL frozen under load: every process of the cluster stopped with SIGSTOP for 20
/// seconds (6 in short mode) while 8 writers post and a probe asks `/health` every 50 ms. No
/// request waits past its deadline, `/health` answers within 2 seconds throughout, writes
/// resume within 10 seconds of the thaw, nothing acknowledged is lost, nothing stays leased.
/// Then the cluster is frozen again and the server gets SIGTERM: it still exits 0 in time.
enum PostgresFreezeScenario {
    static func run(_ suite: SuiteOptions) throws -> ScenarioResult {
        let (cluster, store, server) = try PostgresFaults.start(suite, name: "pg-freeze")
        var result = ScenarioResult("pg-freeze")
        defer {
            try? cluster.signalServer(SIGCONT)
            server.stop()
        }
        let freeze = Double(suite.scaled(short: 6, full: 20))
        let load = WriteLoad(port: server.port, writers: 8, name: "freeze")
        let health = HealthProbe(port: server.port)
        Thread.sleep(forTimeInterval: 1)
        try cluster.signalServer(SIGSTOP)
        Thread.sleep(forTimeInterval: freeze)
        try cluster.signalServer(SIGCONT)
        let thawed = ContinuousClock.now
        _ = eventually(timeout: .seconds(12)) { load.firstAcknowledged(sentAfter: thawed) != nil }
        Thread.sleep(forTimeInterval: 1)
        load.stop()
        health.stop()
        result.report("8 writers; every PostgreSQL process stopped for \(Int(freeze)) s")
        result.checkAnswers(of: load, within: PostgresFaults.answerBound, allowed: PostgresFaults.refusals)
        result.check(
            "/health \(health.count) answers, \(health.failed.count) failed, slowest \(Int(health.latency(1))) ms",
            target: "all within 2 s",
            health.failed.isEmpty && health.latency(1) <= 2000
        )
        result.checkWritesResume(load, after: thawed, "the thaw")
        let missing = load.missing(from: try store.movieTitles())
        let acknowledged = load.acknowledged.withLock { $0.count }
        result.check("acknowledged writes missing \(missing) of \(acknowledged.grouped)", target: "0", missing == 0)
        result.checkNothingHeld(by: server)
        // Frozen again, with writers waiting on it: the shutdown may not wait for the database.
        let stuck = WriteLoad(port: server.port, writers: 4, name: "frozen-shutdown")
        try cluster.signalServer(SIGSTOP)
        Thread.sleep(forTimeInterval: 1)
        result.checkStopsOnSIGTERM(server, within: .seconds(12), while: "with the database frozen")
        try cluster.signalServer(SIGCONT)
        stuck.stop()
        return result
    }
}
