import Foundation
import Synchronization
import ScopedTestSupport

/// 12. PostgreSQL restarted under load: 8 writers while the cluster restarts fast, then stops
/// immediately and stays down for 5 seconds (2 in short mode) before it starts again. Every
/// request is answered, 201 or 503 `database_unavailable`; writes resume within 10 seconds of
/// each return; no acknowledged write is lost; nothing stays leased; SIGTERM still exits 0.
/// Each write's history record is handed off for after its commit: no record exists of a movie
/// that is not stored (a request whose statement or commit the outage failed never starts its
/// record), and every acknowledged movie without its record is counted as failed or not
/// started work in `/debug/stats` (a record the outage caught), none lost unseen.
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
        // Every record has started and ended once no scope is open: the counts are final.
        _ = eventually(timeout: .seconds(15)) { (try? ServerStatistics.read(port: server.port))?.otherOpenScopes == 0 }
        let handOffs = (try? ServerStatistics.read(port: server.port))?.handOffs
        result.checkStopsOnSIGTERM(server, within: .seconds(12))
        try checkHistory(of: load, in: store, handOffs: handOffs, into: &result)
        return result
    }

    /// The history against the movies: no record of a movie that is not stored, and every
    /// acknowledged movie without a record accounted for by a hand-off counted as failed.
    private static func checkHistory(
        of load: WriteLoad,
        in store: Store,
        handOffs: ServerStatistics.HandOffs?,
        into result: inout ScenarioResult
    ) throws {
        guard let cluster = store.postgresServer, let database = store.postgresDatabase else { return }
        let stored = Set(try store.movieTitles().keys)
        let recorded =
            try cluster.psqlBlocking("SELECT movie_id FROM movie_changes WHERE action = 'created'", database: database)
            .split(separator: "\n").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        let orphans = recorded.filter { !stored.contains($0) }.count
        result.check(
            "history records of movies that were never committed: \(orphans) of \(recorded.count.grouped)",
            target: "0",
            orphans == 0
        )
        let acknowledged = Set(load.acknowledged.withLock { $0.keys })
        let unrecorded = acknowledged.subtracting(recorded).count
        let counted = handOffs.map { $0.failed + $0.notStarted }
        let counts = handOffs.map { "\($0.notStarted) not started (no commit), \($0.failed) failed" } ?? "not reported"
        result.check(
            "acknowledged movies without their record \(unrecorded); hand-offs counted: \(counts)",
            target: "each one counted",
            counted.map { unrecorded <= $0 } ?? false
        )
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
