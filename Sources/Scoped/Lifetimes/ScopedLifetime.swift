/// How long a service's value lives, and which scope owns it.
///
/// From the longest to the shortest: ``app``, ``tenant``, ``scope``. A service may read
/// services of its own lifetime or a longer one while it is built; reading a shorter-lived one
/// would keep it past its owner's end, and is refused as a captive dependency.
public enum ScopedLifetime: String, Hashable, Sendable, Codable, CustomStringConvertible {
    /// Built once per application root, on first use, and closed when the root shuts down.
    case app
    /// Built once per tenant, on the first use by one of the tenant's scopes, shared by that
    /// tenant's scopes only, and closed when the tenant is evicted, after its last scope ended.
    ///
    /// Read in a scope that belongs to no tenant, it throws ``ScopedError/outsideTenant(entry:)``.
    /// The tenants a root opens are its ``TenantProvider``'s: ScopedTenants' `Tenancy`.
    case tenant
    /// Built once per scope opened with `withScope`, on first use in it, and closed when that
    /// scope ends, told how it ended.
    case scope

    /// A description for logs and error messages.
    public var description: String { rawValue }

    /// Whether a service of this lifetime outlives one of `other`'s: an ``app`` service
    /// outlives ``tenant`` and ``scope`` ones, a ``tenant`` service outlives ``scope`` ones.
    func outlives(_ other: ScopedLifetime) -> Bool {
        rank < other.rank
    }

    private var rank: Int {
        switch self {
        case .app: 0
        case .tenant: 1
        case .scope: 2
        }
    }
}
