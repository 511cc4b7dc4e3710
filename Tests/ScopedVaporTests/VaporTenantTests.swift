import Scoped
import ScopedTenants
import ScopedVapor
import Synchronization
import Testing
import Vapor
import VaporTesting

/// A tenant's store: one per tenant, named after it.
private final class TenantBox: Sendable {
    let tenant: TenantID?
    init(tenant: TenantID?) { self.tenant = tenant }
}

private enum TenantBoxKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.tenant
    static func makeValue() async throws -> TenantBox { TenantBox(tenant: ScopedValues.current.tenant) }
}

private struct TenantEcho: Content {
    var tenant: String?
    var box: String?
    var boxIdentity: String
}

/// `RequestScopeMiddleware(root:tenant:)`: each request's scope belongs to the tenant its
/// resolver names.
struct VaporTenantTests {
    @Test func eachRequestRunsAsItsTenantAndSharesOnlyThatTenantsServices() async throws {
        let root = ScopeRoot(observers: [Tenancy(maximumOpen: 10)])
        try await withTestingApp { app in
            app.middleware.use(
                RequestScopeMiddleware(
                    root: root,
                    tenant: { request in
                        guard let raw = request.headers.first(name: "X-Tenant") else { return nil }
                        guard let tenant = TenantID(raw) else { throw Abort(.badRequest, reason: "invalid_tenant") }
                        return tenant
                    }
                )
            )
            app.get("whoami") { _ async throws -> TenantEcho in
                let values = ScopedValues.current
                guard values.tenant != nil else {
                    return TenantEcho(tenant: nil, box: nil, boxIdentity: "")
                }
                let box = try await values.service(TenantBoxKey.self)
                return TenantEcho(
                    tenant: values.tenant?.rawValue,
                    box: box.tenant?.rawValue,
                    boxIdentity: "\(ObjectIdentifier(box).hashValue)"
                )
            }
            let tester = try app.testing(method: .running(hostname: "127.0.0.1", port: 0))
            var identities: [String: Set<String>] = [:]
            for raw in ["a", "b", "a", "c", "b"] {
                try await tester.test(.GET, "whoami", headers: ["X-Tenant": raw]) { response in
                    let echo = try response.content.decode(TenantEcho.self)
                    #expect(echo.tenant == raw)
                    #expect(echo.box == raw)
                    identities[raw, default: []].insert(echo.boxIdentity)
                }
            }
            #expect(identities.values.allSatisfy { $0.count == 1 })
            #expect(Set(identities.values.flatMap { $0 }).count == 3)
            try await tester.test(.GET, "whoami") { response in
                let echo = try response.content.decode(TenantEcho.self)
                #expect(echo.tenant == nil)
            }
            try await tester.test(.GET, "whoami", headers: ["X-Tenant": "Not Valid"]) { response in
                #expect(response.status == .badRequest)
            }
        }
        #expect(root.tenantStatistics == TenantStatistics(open: 3, evicted: 0))
        #expect(root.openScopeCount == 0)
        await root.shutdown()
    }
}
