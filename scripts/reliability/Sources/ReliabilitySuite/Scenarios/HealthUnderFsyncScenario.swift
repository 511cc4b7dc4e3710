import Foundation
import Synchronization

/// 16. `/health` while the disk is busy: 200 writers commit with `synchronous=FULL` (the
/// production profile) for 30 seconds (5 in short mode) while a probe asks `/health` every
/// 20 ms. A request that skips the database must not wait behind fsync: p99 ≤ 20 ms.
enum HealthUnderFsyncScenario {
    static func run(_ suite: SuiteOptions) throws -> ScenarioResult {
        var result = ScenarioResult("health-under-fsync")
        let server = try ServerProcess(suite, profile: "production", database: suite.databaseFile("health-fsync"))
        defer { server.stop() }
        let duration = Double(suite.scaled(short: 5, full: 30))
        let load = WriteLoad(port: server.port, writers: 200, name: "fsync")
        Thread.sleep(forTimeInterval: 1)  // every writer connected and writing
        let health = HealthProbe(port: server.port, interval: 0.02)
        Thread.sleep(forTimeInterval: duration)
        health.stop()
        load.stop()
        let created = load.outcomes()["201", default: 0]
        result.report(
            "200 writers, synchronous=FULL, \(Int(duration)) s: \(created.grouped) writes committed (\(Int(Double(created) / (duration + 1)))/s)"
        )
        result.checkAnswers(of: load, within: 10, allowed: ["503 busy"])
        result.check(
            String(
                format: "/health %d answers, %d failed: p50 %.1f ms, p99 %.1f ms, max %.1f ms",
                health.count,
                health.failed.count,
                health.latency(0.5),
                health.latency(0.99),
                health.latency(1)
            ),
            target: "p99 ≤ 20 ms",
            health.failed.isEmpty && health.latency(0.99) <= 20
        )
        return result
    }
}
