import Foundation
import Scoped
import ScopedSQLite
import ScopedTenants
import ScopedTestSupport
import ScopedTesting
import Testing

private let noteMigrations = [
    SQLiteMigration(version: 1, name: "notes", statements: ["CREATE TABLE notes (body TEXT)"])
]

private func tenant(_ raw: String) -> TenantID { TenantID(raw)! }

/// Writes `body` in the current scope's session and returns every note it sees.
private func writeAndRead(_ body: String) async throws -> [String] {
    let session = try await ScopedValues.current.sqliteSession
    try await session.execute("INSERT INTO notes (body) VALUES (\(body))")
    return try await session.query("SELECT body FROM notes ORDER BY rowid").map { try $0.get("body", as: String.self) }
}

/// A tenant's database: a file of its own, opened on its first scope, closed when it is evicted.
struct SQLiteTenantDatabaseTests {
    @Test func eachTenantWritesAFileOfItsOwnThatOutlivesItsEviction() async throws {
        let folder = try TemporaryFolder()
        let root = ScopeRoot(
            startingFrom: ScopedValues(),
            observers: [
                Tenancy(idleTimeout: .milliseconds(20)) { tenant, values in
                    values.sqliteConfiguration?.path = folder.path("tenants/\(tenant).sqlite")
                }
            ]
        ) {
            $0.sqliteConfiguration = SQLiteConfiguration(path: folder.path("app.sqlite"), migrations: noteMigrations)
        }
        #expect(try await root.withScope(tenant: tenant("a")) { try await writeAndRead("a1") } == ["a1"])
        #expect(try await root.withScope(tenant: tenant("b")) { try await writeAndRead("b1") } == ["b1"])
        let database = try await root.withScope(tenant: tenant("a")) { try await ScopedValues.current.sqliteDatabase }
        // Evicted when idle: its database closes (in the eviction's own task, so soon after),
        // and the next scope opens the same file again.
        let closed = await eventually(within: .seconds(10)) {
            do {
                try await database.read { _ in }
                return false
            } catch {
                return error is SQLiteDatabaseClosedError
            }
        }
        #expect(closed)
        #expect(root.tenantStatistics.evicted >= 1)
        #expect(try await root.withScope(tenant: tenant("a")) { try await writeAndRead("a2") } == ["a1", "a2"])
        // No tenant: the application's database, which no tenant wrote to.
        #expect(try await root.withScope { try await writeAndRead("app") } == ["app"])
        await root.shutdown()
        #expect(FileManager.default.fileExists(atPath: folder.path("tenants/a.sqlite")))
        #expect(FileManager.default.fileExists(atPath: folder.path("tenants/b.sqlite")))
    }
}

/// `.scoped(tenant:)`, alone and inside a suite's `.scoped(database:)`.
@Suite(.scoped(database: .sqlite(migrations: noteMigrations)))
struct SQLiteTenantTraitTests {
    @Test(.scoped(tenant: TenantID("acme")!))
    func aTestRunsAsItsTenantOnADatabaseOfTheTenantsOwn() async throws {
        #expect(ScopedValues.current.tenant == tenant("acme"))
        #expect(try await writeAndRead("acme") == ["acme"])
        // The suite's database, as a scope of no tenant sees it, holds nothing of the tenant's.
        let root = ScopeRoot(observers: [Tenancy()]) { _ in }
        #expect(try await root.withScope { try await writeAndRead("plain") } == ["plain"])
        #expect(try await root.withScope(tenant: tenant("other")) { try await writeAndRead("other") } == ["other"])
        await root.shutdown()
    }

    @Test func aRootBuiltInTheTestGivesEachOfItsTenantsADatabase() async throws {
        let root = ScopeRoot(observers: [Tenancy()]) { _ in }
        for name in ["x", "y", "x"] {
            let seen = try await root.withScope(tenant: tenant(name)) { try await writeAndRead(name) }
            #expect(seen.allSatisfy { $0 == name })
        }
        #expect(try await root.withScope(tenant: tenant("x")) { try await writeAndRead("x") }.count == 3)
        await root.shutdown()
    }
}

@Test(.scoped(tenant: TenantID("solo")!))
func withoutASuiteTheTenantTraitMakesATestScopeOfTheTenant() async throws {
    #expect(ScopedValues.current.tenant == tenant("solo"))
    #expect(ScopedValues.current.isTestScope)
}
