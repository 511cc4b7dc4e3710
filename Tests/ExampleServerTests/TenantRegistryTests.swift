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
    .loadExclusion,
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
            let clients = (0..<4)
                .map { client in
                    Task {
                        let tenant = client.isMultiple(of: 2) ? "acme" : "beta"
                        let index = client / 2 % instances.count
                        let instance = instances[index]
                        while !log.stopped.load(ordering: .relaxed) {
                            let started = ContinuousClock.now
                            let status =
                                (try? await instance.get("/movies?limit=5", headers: ["X-Tenant": tenant]).status) ?? 0
                            log.record(tenant: tenant, instance: index, status: status, started: started, ended: .now)
                        }
                    }
                }
            defer { log.stopped.store(true, ordering: .relaxed) }
            try await Task.sleep(for: .milliseconds(300))

            // Suspended: refused on every instance, and drained. (How soon, under load, is the
            // reliability suite's figure, `shared-tenants`: here the test runs beside the others.)
            #expect(try await sql("SELECT scoped_set_tenant_state('acme', 'suspended')") == "3")
            for instance in instances {
                #expect(
                    await eventually(within: .seconds(10)) {
                        (try? await instance.get("/movies", headers: ["X-Tenant": "acme"]))?.body
                            .contains(
                                "tenant_suspended"
                            ) == true
                    }
                )
                #expect(
                    await eventually(within: .seconds(10)) {
                        instance.messages.contains("Tenant acme is suspended; its services are closed")
                    }
                )
            }
            try await Task.sleep(for: .milliseconds(500))
            log.stopped.store(true, ordering: .relaxed)
            for client in clients { await client.value }
            let requests = log.all
            let acme = requests.filter { $0.tenant == "acme" }
            #expect(acme.contains { $0.status == 200 } && acme.contains { $0.status == 403 })
            #expect(acme.allSatisfy { $0.status == 200 || $0.status == 403 }, "\(acme.map(\.status))")
            // Once an instance has refused acme, it never serves it again: every success began
            // before that instance's first refusal.
            for index in instances.indices {
                let answers = acme.filter { $0.instance == index }
                guard let firstRefusal = answers.filter({ $0.status == 403 }).map(\.started).min() else { continue }
                #expect(answers.filter { $0.status == 200 }.allSatisfy { $0.started < firstRefusal })
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
                    await eventually(within: .seconds(10)) {
                        let body = (try? await instance.get("/movies?limit=50", headers: ["X-Tenant": "beta"]))?.body
                        return body.map { !$0.contains("beta own") && $0.contains("\"items\"") } ?? false
                    }
                )
            }
            // The profile's own value (`sqlite`, the database's repository, as at the root): beta is
            // served from its schema again, not taken down by a SQLite database it has not got.
            let profileValue = "SELECT scoped_set_tenant_setting('beta', 'catalog.repository', '\"sqlite\"')"
            #expect(try await sql(profileValue) == "5")
            for instance in instances {
                #expect(
                    await eventually(within: .seconds(10)) {
                        let answer = try? await instance.get("/movies?limit=50", headers: ["X-Tenant": "beta"])
                        return answer.map { $0.status == 200 && $0.body.contains("beta own") } ?? false
                    }
                )
            }
            // A value no instance can apply is rejected by each, naming the key; beta keeps its settings.
            #expect(try await sql("SELECT scoped_set_tenant_setting('beta', 'database.readers', '0')") == "6")
            for instance in instances {
                #expect(
                    await eventually(within: .seconds(10)) {
                        instance.messages.contains {
                            $0.hasPrefix(
                                "Tenant change rejected: Invalid configuration: database.readers in PostgreSQL settings of tenant beta, version 6: 0 is outside 1…64"
                            )
                        }
                    }
                )
                #expect(try await instance.tenantRegistry()["rejected"] as? Int == 1)
                let body = try await instance.get("/movies?limit=50", headers: ["X-Tenant": "beta"]).body
                #expect(body.contains("beta own"))
            }
            // Deleted: unknown on every instance.
            #expect(try await sql("SELECT scoped_set_tenant_state('acme', 'deleted')") == "7")
            for instance in instances {
                #expect(
                    await eventually(within: .seconds(10)) {
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
        let instance: Int
        let status: Int
        let started: ContinuousClock.Instant
        let ended: ContinuousClock.Instant
    }

    let stopped = Atomic(false)
    private let requests = Mutex<[Request]>([])

    func record(
        tenant: String,
        instance: Int,
        status: Int,
        started: ContinuousClock.Instant,
        ended: ContinuousClock.Instant
    ) {
        requests.withLock {
            $0.append(Request(tenant: tenant, instance: instance, status: status, started: started, ended: ended))
        }
    }

    var all: [Request] { requests.withLock { $0 } }
}
