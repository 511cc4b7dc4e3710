import Configuration
import Logging
import Scoped
import ScopedPostgres
import ScopedTenants
import ScopedTestSupport
import Testing

/// The tenant registry on a real database: what its SQL functions refuse, and how a change
/// reaches a running registry.
@Suite(postgresAvailable, .timeLimit(.minutes(2)))
struct PostgresTenantRegistryTests {
    static func registry(_ fixture: PostgresFixture, pollInterval: Duration = .seconds(60)) throws
        -> PostgresTenantRegistry
    {
        PostgresTenantRegistry(
            configuration: try PostgresConfiguration(url: fixture.url),
            settingKeys: ["catalog.repository": .string, "database.readers": .integer],
            pollInterval: pollInterval,
            logger: Logger(label: "tenants")
        )
    }

    @Test func theFunctionsRefuseInvalidIDsStatesUnknownTenantsKeysAndWrongTypes() async throws {
        let fixture = try await PostgresFixture()
        try await Self.registry(fixture).load()
        try await fixture.server.psql("SELECT scoped_set_tenant_state('acme', 'active')", database: fixture.database)
        let refusals: [(sql: String, says: String)] = [
            ("SELECT scoped_set_tenant_state('Acme', 'active')", #"invalid tenant ID "Acme""#),
            ("SELECT scoped_set_tenant_state('a_b', 'active')", #"invalid tenant ID "a_b""#),
            ("SELECT scoped_set_tenant_state('acme', 'paused')", #"invalid tenant state "paused""#),
            (
                "SELECT scoped_set_tenant_setting('nobody', 'catalog.repository', '\"fixture\"')",
                #"unknown tenant "nobody""#
            ),
            (
                "SELECT scoped_set_tenant_setting('acme', 'log.level', '\"debug\"')",
                #"unknown tenant setting key "log.level""#
            ),
            (
                "SELECT scoped_set_tenant_setting('acme', 'database.readers', '\"four\"')",
                #"setting "database.readers": expected integer but got "four""#
            ),
        ]
        for refusal in refusals {
            let error = await #expect(throws: PostgresTestServerError.self) {
                try await fixture.server.psql(refusal.sql, database: fixture.database)
            }
            #expect(error?.message.contains(refusal.says) == true, "\(refusal.sql): \(String(describing: error))")
        }
        #expect(
            try await fixture.server.psql("SELECT version FROM scoped_tenants_version", database: fixture.database)
                == "1"
        )
        try await fixture.server.psql(
            "SELECT scoped_set_tenant_setting('acme', 'database.readers', '2')",
            database: fixture.database
        )
        let registry = try Self.registry(fixture)
        try await registry.load()
        let acme = try #require(registry.tenant(TenantID("acme")!))
        #expect(acme.state == .active)
        #expect(ConfigReader(provider: acme.settings).int(forKey: "database.readers") == 2)
        #expect(registry.status.version == 2)
    }

    @Test func eachChangeReachesTheWatchersFromItsNotification() async throws {
        let fixture = try await PostgresFixture()
        let registry = try Self.registry(fixture)
        try await registry.load()
        try await fixture.server.psql("SELECT scoped_set_tenant_state('acme', 'active')", database: fixture.database)
        let seen = Recorder<[String]>()
        try await withThrowingTaskGroup { group in
            group.addTask { try await registry.run() }
            defer { group.cancelAll() }
            #expect(await eventually { registry.status.isListening })
            // Read on connecting: what was committed before the registry ran.
            #expect(registry.tenant(TenantID("acme")!)?.state == .active)
            try await registry.watchChanges { changes in
                try await fixture.server.psql(
                    """
                    BEGIN;
                    SELECT scoped_set_tenant_state('acme', 'suspended');
                    SELECT scoped_set_tenant_state('beta', 'active');
                    COMMIT;
                    """,
                    database: fixture.database
                )
                for await tenants in changes {
                    seen.record(tenants.map { "\($0.id) \($0.state.rawValue)" }.sorted())
                    break
                }
            }
        }
        // One transaction, one change of both tenants.
        #expect(seen.all == [["acme suspended", "beta active"]])
        #expect(registry.tenant(TenantID("acme")!)?.state == .suspended)
        #expect(registry.status.source == .notify)
    }

    @Test func aSuspendedTenantIsEvictedFromTheRootAndRefusedWhenItOpensAgain() async throws {
        let fixture = try await PostgresFixture()
        let registry = try Self.registry(fixture)
        try await registry.load()
        try await fixture.server.psql("SELECT scoped_set_tenant_state('acme', 'active')", database: fixture.database)
        try await fixture.server.psql("SELECT scoped_set_tenant_state('beta', 'active')", database: fixture.database)
        try await registry.load()
        let root = ScopeRoot(
            observers: [
                Tenancy { id, _ in
                    guard registry.tenant(id)?.state == .active else { throw TenantRefused(tenant: id) }
                }
            ])
        let acme = try #require(TenantID("acme"))
        try await root.withScope(tenant: acme) {}
        try await root.withScope(tenant: TenantID("beta")) {}
        #expect(root.tenantStatistics == TenantStatistics(open: 2, evicted: 0))
        let following = Task {
            try await withThrowingTaskGroup { group in
                group.addTask { try await registry.run() }
                // SNIPPET-BEGIN
                try await registry.watchChanges { changes in
                    for await tenants in changes {
                        for tenant in tenants { await root.evictTenant(tenant.id) }
                    }
                }
                // SNIPPET-END
            }
        }
        defer { following.cancel() }
        #expect(await eventually { registry.status.isListening })
        try await fixture.server.psql("SELECT scoped_set_tenant_state('acme', 'suspended')", database: fixture.database)
        #expect(
            await eventually { root.tenantStatistics == TenantStatistics(open: 1, evicted: 1) }
        )
        await #expect(throws: TenantRefused(tenant: acme)) { try await root.withScope(tenant: acme) {} }
        try await root.withScope(tenant: TenantID("beta")) {}
        following.cancel()
        await root.shutdown()
    }
}

/// What the test's tenancy throws for a tenant that is not active.
private struct TenantRefused: Error, Equatable {
    let tenant: TenantID
}
