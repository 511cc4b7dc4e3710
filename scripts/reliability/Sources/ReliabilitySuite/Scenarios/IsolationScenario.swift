import Foundation
/// 1. Isolation under load: every request carries its own request ID and override, and every
/// value its handler read (directly, in child tasks, after a database round-trip) must be its own.
/// On either backend.
enum IsolationScenario {
    static func run(_ suite: SuiteOptions, on backend: Store.Backend) async throws -> ScenarioResult {
        let store = try Store(backend, suite: suite, name: "isolation")
        var result = ScenarioResult(store.scenarioName("isolation"))
        let server = try store.startServer(suite, profile: "development")
        defer { server.stop() }
        let load = EchoLoad(
            ports: [server.port],
            requests: suite.scaled(short: 10_000, full: 100_000),
            connections: 64,
            repository: store.repositoryType
        )
        let (tally, seconds) = load.run()
        result.report(
            "\(load.requests.grouped) requests over \(load.connections) connections in \(String(format: "%.1f", seconds)) s"
        )
        result.check("\(tally["mismatches"]) cross-request mismatches", target: "0", tally["mismatches"] == 0)
        result.check("\(tally["errors"]) failed requests", target: "0", tally["errors"] == 0)
        result.check(
            "\(tally["completed"].grouped) answered",
            target: "\(load.requests.grouped)",
            tally["completed"] == load.requests
        )
        if tally["mismatches"] > 0 { result.report("first mismatch: \(tally.example("mismatches"))") }
        if tally["errors"] > 0 { result.report("first error: \(tally.example("errors"))") }
        return result
    }
}
