import Foundation
import ScopedTestSupport
import Synchronization
import Testing

@testable import CatalogApp

/// Two instances of the example server in the `multitenant` profile on PostgreSQL with
/// `tenants.fromDatabase`: a tenant an operator suspends, changes or deletes with one statement is
/// refused, changed or forgotten on every instance, while its requests in flight finish and every
/// other tenant is untouched.
@Suite(
    .serialized,
    .enabled(if: PostgresTestServer.isEnabled, Comment(rawValue: PostgresTestServer.unavailableReason ?? ""))
)
struct TenantRegistryTests {
    @Test func aTenantSuspendedChangedAndDeletedInTheDatabaseIsOnEveryInstanceAndNoOtherTenantNotices() async throws {
        try await ServerInstance.withInstances(
            2,
            environment: ["APP_ENV": "multitenant", "TENANTS_FROM_DATABASE": "true"],
            ready: { (try? await $0.tenantRegistry())?["listening"] as? Bool == true }
        ) { instances, sql in
            #expect(try await sql("SELECT scoped_set_tenant_state('acme', 'active')") == "1")
            #expect(try await sql("SELECT scoped_set_tenant_state('beta', 'active')") == "2")
            for instance in instances {
                #expect(
                    await eventually { (try? await instance.tenantRegistry())?["version"] as? Int == 2 },
                    "\(instance.base) did not read the two tenants"
                )
            }
            // A tenant the registry does not have is unknown, as a deleted one will be.
            #expect(try await instances[0].get("/movies", headers: ["X-Tenant": "nobody"]).status == 404)
            for tenant in ["acme", "beta"] {
                let created = try await instances[0]
                    .get(
                        "/movies",
                        method: "POST",
                        body: #"{"title":"\#(tenant) own","year":2001}"#,
                        headers: ["X-Tenant": tenant]
                    )
                #expect(created.status == 201, "\(created.body)")
            }

            // Both tenants' clients on both instances, all along.
            let log = TenantRequestLog()
            let clients = (0..<8)
                .map { client in
                    Task {
                        let tenant = client.isMultiple(of: 2) ? "acme" : "beta"
                        let instance = instances[client / 2 % instances.count]
                        while !log.stopped.load(ordering: .relaxed) {
                            let started = ContinuousClock.now
                            let status =
                                (try? await instance.get("/movies?limit=5", headers: ["X-Tenant": tenant]).status) ?? 0
                            log.record(tenant: tenant, status: status, started: started, ended: .now)
                        }
                    }
                }
            defer { log.stopped.store(true, ordering: .relaxed) }
            try await Task.sleep(for: .milliseconds(300))

            // Suspended: refused on every instance within a second, and drained.
            #expect(try await sql("SELECT scoped_set_tenant_state('acme', 'suspended')") == "3")
            let suspended = ContinuousClock.now
            for instance in instances {
                #expect(
                    await eventually(within: .seconds(2)) {
                        (try? await instance.get("/movies", headers: ["X-Tenant": "acme"]))?.body
                            .contains(
                                "tenant_suspended"
                            ) == true
                    }
                )
                #expect(
                    await eventually(within: .seconds(5)) {
                        instance.messages.contains("Tenant acme is suspended; its services are closed")
                    }
                )
            }
            try await Task.sleep(for: .milliseconds(500))
            log.stopped.store(true, ordering: .relaxed)
            for client in clients { await client.value }
            let requests = log.all
            let acme = requests.filter { $0.tenant == "acme" }
            let longest = acme.map { $0.ended - $0.started }.max() ?? .zero
            let lastSuccess = acme.filter { $0.status == 200 }.map(\.ended).max()
            #expect(acme.contains { $0.status == 200 } && acme.contains { $0.status == 403 })
            #expect(acme.allSatisfy { $0.status == 200 || $0.status == 403 }, "\(acme.map(\.status))")
            if let lastSuccess {
                #expect(
                    lastSuccess - suspended < .seconds(1) + longest,
                    "acme succeeded \(lastSuccess - suspended) after"
                )
            }
            let beta = requests.filter { $0.tenant == "beta" }
            #expect(beta.count > 10 && beta.allSatisfy { $0.status == 200 }, "\(beta.map(\.status))")
            // Evicted: only beta is open, on each instance that served it.
            for instance in instances {
                let statistics = try await instance.statistics()
                let tenants = statistics["tenants"] as? [String: Int]
                #expect(tenants?["open"] == 1, "\(statistics)")
            }

            // Beta's settings changed: its catalog is the fixture's now, on every instance.
            #expect(
                try await sql("SELECT scoped_set_tenant_setting('beta', 'catalog.repository', '\"fixture\"')") == "4"
            )
            for instance in instances {
                #expect(
                    await eventually(within: .seconds(2)) {
                        let body = (try? await instance.get("/movies?limit=50", headers: ["X-Tenant": "beta"]))?.body
                        return body.map { !$0.contains("beta own") && $0.contains("\"items\"") } ?? false
                    }
                )
            }
            // A value no instance can apply is rejected by each, naming the key; beta keeps its settings.
            #expect(try await sql("SELECT scoped_set_tenant_setting('beta', 'database.readers', '0')") == "5")
            for instance in instances {
                #expect(
                    await eventually(within: .seconds(2)) {
                        instance.messages.contains {
                            $0.hasPrefix(
                                "Tenant change rejected: Invalid configuration: database.readers in PostgreSQL settings of tenant beta, version 5: 0 is outside 1…64"
                            )
                        }
                    }
                )
                #expect(try await instance.tenantRegistry()["rejected"] as? Int == 1)
                let body = try await instance.get("/movies?limit=50", headers: ["X-Tenant": "beta"]).body
                #expect(!body.contains("beta own"))
            }
            // Deleted: unknown on every instance.
            #expect(try await sql("SELECT scoped_set_tenant_state('acme', 'deleted')") == "6")
            for instance in instances {
                #expect(
                    await eventually(within: .seconds(2)) {
                        (try? await instance.get("/movies", headers: ["X-Tenant": "acme"]))?.body
                            .contains(
                                "unknown_tenant"
                            ) == true
                    }
                )
            }
        }
    }
}

/// Every request the clients made: its tenant, status and when it ran.
private final class TenantRequestLog: Sendable {
    struct Request: Sendable {
        let tenant: String
        let status: Int
        let started: ContinuousClock.Instant
        let ended: ContinuousClock.Instant
    }

    let stopped = Atomic(false)
    private let requests = Mutex<[Request]>([])

    func record(tenant: String, status: Int, started: ContinuousClock.Instant, ended: ContinuousClock.Instant) {
        requests.withLock { $0.append(Request(tenant: tenant, status: status, started: started, ended: ended)) }
    }

    var all: [Request] { requests.withLock { $0 } }
}
