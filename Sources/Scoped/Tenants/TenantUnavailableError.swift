/// A ``ScopedLifetime/tenant`` service could not be built: the tenant's database would not
/// open, its migration failed.
///
/// Only that tenant's scopes see it: every other tenant keeps its services. Nothing is kept of
/// the failed construction, so the tenant's next read tries again. A server answers it as the
/// tenant being unavailable (503), never as a fault of the request.
public struct TenantUnavailableError: Error, CustomStringConvertible {
    /// The tenant whose service failed.
    public let tenant: TenantID
    /// The name of the service that failed to build.
    public let entry: String
    /// What its construction threw.
    public let underlying: any Error

    /// An error for `tenant`'s service `entry`, whose construction threw `underlying`.
    public init(tenant: TenantID, entry: String, underlying: any Error) {
        self.tenant = tenant
        self.entry = entry
        self.underlying = underlying
    }

    /// A description for logs and error messages.
    public var description: String {
        "Tenant \(tenant) is unavailable: its \(entry) could not be built: \(underlying)"
    }

    /// `error`, thrown by the construction of `tenant`'s service `entry`, as callers see it:
    /// wrapped, unless it says something else than the tenant being unavailable (a cycle, a
    /// cancellation) or is wrapped already.
    static func wrapping(_ error: any Error, tenant: TenantID?, entry: String) -> any Error {
        guard let tenant, !(error is TenantUnavailableError), !(error is ScopedError), !(error is CancellationError)
        else { return error }
        return TenantUnavailableError(tenant: tenant, entry: entry, underlying: error)
    }
}
