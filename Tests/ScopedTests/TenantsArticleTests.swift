@testable import Scoped
import ScopedTenants
import ScopedTestSupport
import Synchronization
import Testing

// The snippets of ScopedTenants' article, verbatim between the markers, with a stand-in for the store.

/// A stand-in for a tenant's database: remembers its path and what was inserted.
final class CatalogStore: Sendable {
    let path: String
    private let state = Mutex<(titles: [String], isClosed: Bool)>(([], false))

    init(path: String) throws { self.path = path }

    func insert(_ title: String) async throws { state.withLock { $0.titles.append(title) } }
    func close() async { state.withLock { $0.isClosed = true } }
    var titles: [String] { state.withLock { $0.titles } }
    var isClosed: Bool { state.withLock { $0.isClosed } }
}

extension ScopedValues {
    @Entry var storeDirectory: String = "/tmp"
}

// SNIPPET-BEGIN
enum CatalogStoreKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.tenant
    static func makeValue() async throws -> CatalogStore {
        // Built with the tenant's values: its ID, and what the tenancy's configure set.
        let values = ScopedValues.current
        guard let tenant = values.tenant else { throw ScopedError.outsideTenant(entry: name) }
        return try CatalogStore(path: "\(values.storeDirectory)/\(tenant).db")
    }
    static func close(_ store: CatalogStore, outcome: ScopeOutcome) async throws {
        await store.close()
    }
}
// SNIPPET-END

struct TenantsArticleTests {
    @Test func theArticlesRootGivesAcmeItsOwnStoreClosedAtShutdown() async throws {
        // SNIPPET-BEGIN
        let root = ScopeRoot(
            observers: [
                Tenancy(maximumOpen: 100, idleTimeout: .seconds(300)) { tenant, values in
                    values.storeDirectory = "/var/lib/catalog/tenants"
                }
            ]
        )
        try await root.withScope(tenant: TenantID("acme")!) {
            let store = try await ScopedValues.current.service(CatalogStoreKey.self)
            try await store.insert("Toy Story")
        }
        // SNIPPET-END
        let store = try await root.withScope(tenant: TenantID("acme")!) {
            try await ScopedValues.current.service(CatalogStoreKey.self)
        }
        #expect(store.path == "/var/lib/catalog/tenants/acme.db")
        #expect(store.titles == ["Toy Story"])
        await root.shutdown()
        #expect(store.isClosed)
    }

    @Test func everySnippetOfTheArticleIsHere() throws {
        let article = "Sources/ScopedTenants/ScopedTenants.docc/ScopedTenants.md"
        #expect(try ArticleSnippets.inArticle(article) == ArticleSnippets.marked())
    }
}
