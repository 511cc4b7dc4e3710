import Foundation
import Synchronization
import ScopedTestSupport

/// 12. PostgreSQL restarted under load: 8 writers while the cluster restarts fast, then stops
/// immediately and stays down for 5 seconds (2 in short mode) before it starts again. Every
/// request is answered, 201 or 503 `database_unavailable`; writes resume within 10 seconds of
/// each return; no acknowledged write is lost; nothing stays leased; SIGTERM still exits 0.
enum PostgresRestartScenario {
    static func run(_ suite: SuiteOptions) throws -> ScenarioResult {
        let (cluster, store, server) = try PostgresFaults.start(suite, name: "pg-restart")
        var result = ScenarioResult("pg-restart")
        defer { server.stop() }
        let outage = Double(suite.scaled(short: 2, full: 5))
        let load = WriteLoad(port: server.port, writers: 8, name: "restart")
        Thread.sleep(forTimeInterval: 1)
        try cluster.restartBlocking(mode: "fast")
        let restarted = ContinuousClock.now
        _ = eventually(timeout: .seconds(12)) { load.firstAcknowledged(sentAfter: restarted) != nil }
        try cluster.stopBlocking(mode: "immediate")
        Thread.sleep(forTimeInterval: outage)
        try cluster.startAgainBlocking()
        let back = ContinuousClock.now
        _ = eventually(timeout: .seconds(12)) { load.firstAcknowledged(sentAfter: back) != nil }
        Thread.sleep(forTimeInterval: 1)
        load.stop()
        result.report("8 writers; fast restart, then immediate stop, \(Int(outage)) s down, start")
        result.checkAnswers(of: load, within: PostgresFaults.answerBound, allowed: PostgresFaults.refusals)
        result.checkWritesResume(load, after: restarted, "the fast restart")
        result.checkWritesResume(load, after: back, "the outage")
        let missing = load.missing(from: try store.movieTitles())
        let acknowledged = load.acknowledged.withLock { $0.count }
        result.check("acknowledged writes missing \(missing) of \(acknowledged.grouped)", target: "0", missing == 0)
        result.checkNothingHeld(by: server)
        result.checkStopsOnSIGTERM(server, within: .seconds(12))
        return result
    }
}

/// What the PostgreSQL fault scenarios give the server, and what they accept from it.
enum PostgresFaults {
    /// A dedicated cluster (never the suite's shared one), a new database on it, and ExampleServer
    /// on that database (development profile) with short deadlines, so that a frozen server
    /// fails requests in seconds.
    static func start(
        _ suite: SuiteOptions,
        name: String
    ) throws -> (cluster: PostgresTestServer, store: Store, server: ServerProcess) {
        let cluster = try PostgresTestServer.dedicatedBlocking()
        let store = try Store(.postgres, suite: suite, name: name, server: cluster)
        let server = try store.startServer(
            suite,
            profile: "development",
            environment: ["DATABASE_LEASE_TIMEOUT": "2", "DATABASE_STATEMENT_TIMEOUT": "3"]
        )
        return (cluster, store, server)
    }
    /// The longest a request may wait with those deadlines: a lease, a statement and its
    /// rollback, and a second of slack.
    static let answerBound = 9.0
    /// The answers a request refused by the database may get.
    static let refusals: Set<String> = ["503 database_unavailable", "503 database_timeout"]
}
