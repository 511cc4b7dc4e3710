import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Scoped
import ScopedHummingbird
import ScopedTenants
import Testing

private final class TenantBox: Sendable {
    let tenant: TenantID?
    init(tenant: TenantID?) { self.tenant = tenant }
}

private enum TenantBoxKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.tenant
    static func makeValue() async throws -> TenantBox { TenantBox(tenant: ScopedValues.current.tenant) }
}

/// `RequestScopeMiddleware(root:tenant:)`: each request's scope belongs to the tenant its
/// resolver names, as on Vapor.
struct HummingbirdTenantTests {
    @Test func eachRequestRunsAsItsTenantAndSharesOnlyThatTenantsServices() async throws {
        let root = ScopeRoot(observers: [Tenancy(maximumOpen: 10)])
        let router = Router()
        router.add(
            middleware: RequestScopeMiddleware(
                root: root,
                tenant: { request, _ in
                    guard let raw = request.headers[HTTPField.Name("X-Tenant")!] else { return nil }
                    guard let tenant = TenantID(raw) else { throw HTTPError(.badRequest, message: "invalid_tenant") }
                    return tenant
                }
            )
        )
        router.get("whoami") { _, _ -> String in
            let values = ScopedValues.current
            guard let tenant = values.tenant else { return "none" }
            let box = try await values.service(TenantBoxKey.self)
            return "\(tenant) \(box.tenant?.rawValue ?? "-") \(ObjectIdentifier(box).hashValue)"
        }
        let app = Application(router: router)
        try await app.test(.router) { client in
            var identities: [String: Set<String>] = [:]
            for raw in ["a", "b", "a", "c", "b"] {
                try await client.execute(uri: "/whoami", method: .get, headers: [HTTPField.Name("X-Tenant")!: raw]) {
                    let parts = String(buffer: $0.body).split(separator: " ").map(String.init)
                    #expect(parts.count == 3 && parts[0] == raw && parts[1] == raw)
                    identities[raw, default: []].insert(parts.last ?? "")
                }
            }
            #expect(identities.values.allSatisfy { $0.count == 1 })
            #expect(Set(identities.values.flatMap { $0 }).count == 3)
            try await client.execute(uri: "/whoami", method: .get) { #expect(String(buffer: $0.body) == "none") }
            try await client.execute(uri: "/whoami", method: .get, headers: [HTTPField.Name("X-Tenant")!: "No!"]) {
                #expect($0.status == .badRequest)
            }
        }
        #expect(root.tenantStatistics == TenantStatistics(open: 3, evicted: 0))
        #expect(root.openScopeCount == 0)
        await root.shutdown()
    }
}
