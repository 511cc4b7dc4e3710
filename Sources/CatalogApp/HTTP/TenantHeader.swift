import HTTPTypes
import Hummingbird
import Logging
import MovieCatalog
import Scoped

/// The `X-Tenant` header: which tenant a request belongs to, when tenancy is on.
///
/// A tenant route (every route but `/health`, `/metrics`, `/openapi.json` and the debug
/// routes) needs one: without it the request answers `400 tenant_required`, and with an ID
/// that is not 1 to 63 characters from `a-z 0-9 -`, `400 invalid_tenant`. The routes that need
/// none still use a valid one they are given (`/debug/stats` then shows the tenant's database).
enum TenantHeader {
    /// `X-Tenant`.
    static let name = HTTPField.Name("X-Tenant")!

    /// The tenant `request` belongs to, or `nil` on a route that needs none and names none.
    ///
    /// - Throws: ``APIError`` `400 invalid_tenant` or `400 tenant_required`, naming the header.
    static func tenant(of request: Request) throws -> TenantID? {
        guard let raw = request.headers[name] else {
            if needsNoTenant(request.uri.path) { return nil }
            throw APIError.badRequest(
                "X-Tenant is required: this server keeps each tenant's catalog apart.",
                field: "X-Tenant",
                code: "tenant_required"
            )
        }
        guard let tenant = TenantID(raw) else {
            throw APIError.badRequest(
                "X-Tenant must be 1 to 63 characters from a-z, 0-9 and -.",
                field: "X-Tenant",
                code: "invalid_tenant"
            )
        }
        return tenant
    }

    /// Whether `path` is served without a tenant.
    static func needsNoTenant(_ path: String) -> Bool {
        path == "/health" || path == "/metrics" || path == "/openapi.json" || path.hasPrefix("/debug/")
    }

    /// Puts each request's tenant, when it names a valid one, into the request's logger
    /// metadata (`tenant`), so that its log line names it.
    ///
    /// It refuses nothing: it runs outside the request log, and a request without a valid
    /// tenant is refused by the request scope's resolver, inside it, so that its line is logged
    /// with its 400.
    struct Middleware<Context: RequestContext>: RouterMiddleware {
        @concurrent
        func handle(
            _ request: Request,
            context: Context,
            next: @concurrent (Request, Context) async throws -> Response
        ) async throws -> Response {
            guard let raw = request.headers[TenantHeader.name], let tenant = TenantID(raw) else {
                return try await next(request, context)
            }
            var context = context
            context.logger[metadataKey: "tenant"] = "\(tenant)"
            return try await next(request, context)
        }
    }
}
