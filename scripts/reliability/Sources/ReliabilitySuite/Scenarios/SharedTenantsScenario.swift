import Foundation
import ScopedTestSupport
import Synchronization

/// 14. Shared tenants: two instances in the `multitenant` profile on one PostgreSQL database with
/// `tenants.fromDatabase`. Sixteen clients over both instances and two tenants, each request
/// slowed by nothing but the load; `acme` is suspended with `scoped_set_tenant_state`. Targets:
/// no request of `acme` answered with success later than 1 s plus its longest request after the
/// commit, every later one 403 `tenant_suspended`; `beta`'s requests all succeed; once drained,
/// `acme` is no longer open on either instance.
enum SharedTenantsScenario {
    static func run(_ suite: SuiteOptions) throws -> ScenarioResult {
        var result = ScenarioResult("shared-tenants")
        let store = try Store(.postgres, suite: suite, name: "shared-tenants")
        let folder = suite.workFolder.appending(path: "shared-tenants-\(UUID().uuidString.prefix(8))")
        let environment = [
            "TENANTS_FROM_DATABASE": "true", "SETTINGS_POLL_INTERVAL": "1", "TENANTS_DIRECTORY": folder.path,
        ]
        var servers: [ServerProcess] = []
        defer { for server in servers { server.stop() } }
        for _ in 0..<2 {
            servers.append(try store.startServer(suite, profile: "multitenant", environment: environment))
        }
        let ports = servers.map(\.port)
        let database = try store.postgresDatabase ?? { throw SuiteError("no PostgreSQL database") }()
        let server = try store.postgresServer ?? { throw SuiteError("no PostgreSQL server") }()
        for tenant in ["acme", "beta"] {
            _ = try server.psqlBlocking("SELECT scoped_set_tenant_state('\(tenant)', 'active')", database: database)
        }
        let known = ports.allSatisfy { port in
            eventually(timeout: .seconds(5)) { Registry.read(port: port)?.version == 2 }
        }
        result.check("both tenants known on both instances", target: "yes", known)

        struct Answer {
            let tenant: String
            let status: Int
            let code: String
            let started: ContinuousClock.Instant
            let ended: ContinuousClock.Instant
        }
        let answers = Mutex<[Answer]>([])
        let stop = Atomic(false)
        let finished = Atomic(0)
        let clients = 16
        let load = Thread {
            onThreads(clients) { client in
                let tenant = client.isMultiple(of: 2) ? "acme" : "beta"
                let port = ports[client / 2 % ports.count]
                var connection: HTTPConnection?
                var number = 0
                while !stop.load(ordering: .relaxed) {
                    number += 1
                    let started = ContinuousClock.now
                    let request =
                        client % 4 == 1
                        ? HTTPRequest(
                            "POST",
                            "/movies",
                            headers: [("X-Tenant", tenant)],
                            json: #"{"title":"\#(tenant)-\#(client)-\#(number)","year":2001}"#
                        )
                        : HTTPRequest("GET", "/movies?limit=5", headers: [("X-Tenant", tenant)])
                    var status = 0
                    var code = ""
                    do {
                        if connection == nil { connection = try HTTPConnection(port: port, timeout: 10) }
                        let response = try connection!.perform(request)
                        status = response.status
                        code = response.text.firstMatch(of: /"code":"([a-z_]+)"/).map { String($0.1) } ?? ""
                    } catch {
                        connection = nil
                        code = "\(error)"
                    }
                    answers.withLock {
                        $0.append(Answer(tenant: tenant, status: status, code: code, started: started, ended: .now))
                    }
                }
            }
            finished.store(1, ordering: .relaxed)
        }
        load.start()
        Thread.sleep(forTimeInterval: 1)
        _ = try server.psqlBlocking("SELECT scoped_set_tenant_state('acme', 'suspended')", database: database)
        let suspended = ContinuousClock.now
        Thread.sleep(forTimeInterval: Double(suite.scaled(short: 2, full: 10)))
        stop.store(true, ordering: .relaxed)
        _ = eventually(timeout: .seconds(30)) { finished.load(ordering: .relaxed) == 1 }

        let all = answers.withLock { $0 }
        let acme = all.filter { $0.tenant == "acme" }
        let beta = all.filter { $0.tenant == "beta" }
        let longest = acme.filter { $0.started < suspended }.map { $0.ended - $0.started }.max() ?? .zero
        let lastSuccess = acme.filter { (200..<300).contains($0.status) }.map(\.ended).max()
        let lateBy = lastSuccess.map { $0 - suspended } ?? .zero
        result.report(
            "\(all.count.grouped) requests; acme's longest before the commit \(longest.inMilliseconds), its last success \(lateBy.inMilliseconds) after"
        )
        result.check(
            "acme answered with success \(lateBy.inMilliseconds) after its suspension",
            target: "≤ 1 s + longest",
            lateBy <= .seconds(1) + longest
        )
        let afterwards = acme.filter { $0.started > suspended + .seconds(1) + longest }
        let refused = afterwards.filter { $0.status == 403 && $0.code == "tenant_suspended" }.count
        result.check(
            "acme's requests after that refused 403 tenant_suspended \(refused) of \(afterwards.count)",
            target: "all",
            refused == afterwards.count && !afterwards.isEmpty
        )
        let betaFailures = beta.filter { !(200..<300).contains($0.status) }
        result.check(
            "beta's failed requests \(betaFailures.count) of \(beta.count.grouped)",
            target: "0",
            betaFailures.isEmpty && !beta.isEmpty
        )
        if let first = betaFailures.first { result.report("beta's first failure: \(first.status) \(first.code)") }
        let drained = ports.allSatisfy { port in
            eventually(timeout: .seconds(5)) { TenantCount.read(port: port) == 1 }
        }
        result.check("acme no longer open on either instance (1 tenant open on each)", target: "yes", drained)
        let open = try store.openTransactionsSettled()
        result.check(
            "connections in a transaction after the load \(open.count) (\(open.how))",
            target: "0",
            open.count == 0
        )
        return result
    }

    /// `/debug/stats`'s `tenantRegistry`.
    struct Registry: Decodable {
        var version: Int
        private struct Statistics: Decodable { var tenantRegistry: Registry? }

        static func read(port: Int) -> Registry? {
            guard let response = try? HTTPConnection(port: port, timeout: 5).perform(HTTPRequest("GET", "/debug/stats"))
            else { return nil }
            return (try? response.json(Statistics.self))?.tenantRegistry
        }
    }

    /// `/debug/stats`'s count of open tenants.
    enum TenantCount {
        private struct Statistics: Decodable {
            struct Tenants: Decodable { var open: Int }
            var tenants: Tenants?
        }

        static func read(port: Int) -> Int? {
            guard let response = try? HTTPConnection(port: port, timeout: 5).perform(HTTPRequest("GET", "/debug/stats"))
            else { return nil }
            return (try? response.json(Statistics.self))?.tenants?.open
        }
    }

}
