import Foundation

/// 2. Disconnects and cancellation: the isolation load with a tenth of clients hanging up at
/// random moments (mid-head, mid-body, right after the request, mid-response), a fifth of
/// requests writing; then streamed exports left mid-body, and WebSocket clients that vanish
/// mid-message. After the drain nothing may be left open: no scope, no leased connection, no
/// transaction. On either backend.
enum DisconnectScenario {
    static func run(_ suite: SuiteOptions, on backend: Store.Backend) async throws -> ScenarioResult {
        let store = try Store(backend, suite: suite, name: "disconnects")
        var result = ScenarioResult(store.scenarioName("disconnects"))
        let server = try store.startServer(suite, profile: "development")
        defer { server.stop() }
        let load = EchoLoad(
            ports: [server.port],
            requests: suite.scaled(short: 10_000, full: 100_000),
            connections: 64,
            repository: store.repositoryType,
            disconnectRate: 0.1,
            writeRate: 0.2
        )
        let (tally, _) = load.run()
        result.report("\(load.requests.grouped) requests, \(tally["disconnects"].grouped) disconnected by the client")
        result.check("\(tally["mismatches"]) mismatches among the answered", target: "0", tally["mismatches"] == 0)
        result.check("\(tally["errors"]) failed requests", target: "0", tally["errors"] == 0)

        // Units of work that outlive their handler: a streamed body, a WebSocket connection.
        let abandoned = Tally()
        AbandoningClients.abandonExports(
            port: server.port,
            count: suite.scaled(short: 200, full: 1_000),
            threads: 16,
            into: abandoned
        )
        AbandoningClients.abandonWebSockets(
            port: server.port,
            count: suite.scaled(short: 300, full: 1_500),
            threads: 16,
            into: abandoned
        )
        result.report(
            "\(abandoned["exports left mid-body"].grouped) exports left mid-body, "
                + "\(abandoned["websockets vanished"].grouped) WebSocket clients vanished mid-message"
        )
        result.check("\(abandoned["errors"]) failed streaming clients", target: "0", abandoned["errors"] == 0)
        if abandoned["errors"] > 0 { result.report("first error: \(abandoned.example("errors"))") }

        var statistics = try ServerStatistics.read(port: server.port)
        _ = eventually(timeout: .seconds(10)) {
            statistics = (try? ServerStatistics.read(port: server.port)) ?? statistics
            return statistics.otherOpenScopes == 0 && statistics.database.leased == 0
        }
        result.check("leaked scopes \(statistics.otherOpenScopes)", target: "0", statistics.otherOpenScopes == 0)
        result.check("leased connections \(statistics.database.leased)", target: "0", statistics.database.leased == 0)
        let open = try store.openTransactions()
        result.check("open transactions \(open.count) (\(open.how))", target: "0", open.count == 0)
        if tally["mismatches"] > 0 { result.report("first mismatch: \(tally.example("mismatches"))") }
        if tally["errors"] > 0 { result.report("first error: \(tally.example("errors"))") }
        return result
    }
}
