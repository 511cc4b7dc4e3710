import PostgresNIO
import Scoped
import ScopedDatabase
import ScopedPostgres
import ScopedTenants
import ScopedTestSupport
import ScopedTesting
import Testing

private func tenant(_ raw: String) -> TenantID { TenantID(raw)! }

/// Inserts `name` in the current scope's session and returns every item name it sees.
private func insertAndList(_ name: String) async throws -> [String] {
    let session = try await ScopedValues.current.postgresSession
    try await session.execute("INSERT INTO items (name) VALUES (\(name))")
    return try await session.query("SELECT name FROM items ORDER BY id").map { try $0.decode(String.self) }
}

/// The `.scoped(database: .postgres(…))` trait with tenants: each tenant of a test has a schema
/// of its own in the test's transaction, as each has in production, and none outlives the test.
@Suite(postgresAvailable, .scoped(database: SharedItemsDatabase()))
struct PostgresTestTenantTests {
    @Test(.scoped(tenant: TenantID("acme")!))
    func aTestRunsAsItsTenantOnASchemaOfTheTenantsOwn() async throws {
        #expect(ScopedValues.current.tenant == tenant("acme"))
        // The test's scopes take turns on its one connection, and the test's own scope holds its
        // session to the end: the other scopes come first.
        let root = ScopeRoot(observers: [Tenancy()]) { _ in }
        #expect(try await root.withScope(tenant: tenant("acme")) { try await insertAndList("acme") } == ["acme"])
        // The test's own tables, as a scope of no tenant sees them, hold nothing of the tenant's.
        #expect(try await root.withScope { try await insertAndList("plain") } == ["plain"])
        #expect(try await root.withScope(tenant: tenant("other")) { try await insertAndList("other") } == ["other"])
        await root.shutdown()
        // The test's own scope, of its tenant: the same schema as the tenant's scopes above.
        #expect(try await insertAndList("acme again") == ["acme", "acme again"])
    }

    @Test func theABACSequenceSeesEachTenantsOwnRowsAndAFailedScopeUndoesOnlyItsOwn() async throws {
        let root = ScopeRoot(observers: [Tenancy()]) { _ in }
        #expect(try await root.withScope(tenant: tenant("a")) { try await insertAndList("alpha") } == ["alpha"])
        #expect(try await root.withScope(tenant: tenant("b")) { try await insertAndList("beta") } == ["beta"])
        struct Failure: Error {}
        await #expect(throws: Failure.self) {
            try await root.withScope(tenant: tenant("a")) {
                _ = try await insertAndList("undone")
                throw Failure()
            }
        }
        #expect(
            try await root.withScope(tenant: tenant("a")) { try await insertAndList("again") } == ["alpha", "again"]
        )
        #expect(try await root.withScope(tenant: tenant("c")) { try await insertAndList("gamma") } == ["gamma"])
        // A scope of no tenant, after the tenants': the test's own tables, not the last tenant's.
        #expect(try await root.withScope { try await insertAndList("none") } == ["none"])
        await root.shutdown()
    }
}

@Suite(postgresAvailable)
struct PostgresTestTenantCleanupTests {
    @Test func noTenantSchemaOutlivesItsTest() async throws {
        let fixture = try await SharedItemsDatabase.shared()
        let schemas = """
            SELECT count(*) FROM pg_namespace n JOIN pg_class c ON c.relnamespace = n.oid
            WHERE n.nspname LIKE 'tt\\_%' AND c.relname = 'items'
            """
        let seen = try await SharedItemsDatabase()
            .withIsolation(for: "test") { isolate in
                try await withTestScope({ isolate(&$0) }) {
                    let root = ScopeRoot(observers: [Tenancy()]) { _ in }
                    let seen = try await root.withScope(tenant: tenant("kept")) {
                        _ = try await insertAndList("inside")
                        // The tenant's schema, as its session sees it: made in the test.
                        return try await ScopedValues.current.postgresSession
                            .query(
                                "SELECT current_schema()"
                            )
                            .map { try $0.decode(String.self) }
                    }
                    await root.shutdown()
                    return seen
                }
            }
        #expect(seen.count == 1 && seen[0].hasPrefix("tt_"), "\(seen)")
        // Committed nowhere: no test's tenant schema is visible from outside any test.
        #expect(try await fixture.server.psql(schemas, database: fixture.database) == "0")
        #expect(
            try await fixture.server.psql(
                "SELECT count(*) FROM items WHERE name = 'inside'",
                database: fixture.database
            )
                == "0"
        )
    }
}
