/// The identity of a tenant: 1 to 63 characters from `a-z`, `0-9` and `-`.
///
/// The rule of a DNS label, so that an ID is safe wherever a tenant's resources are named by
/// it: a file name (`acme.sqlite`), a PostgreSQL schema, a host name, a metric's value. An ID
/// parsed from a request is checked here, once, before anything is opened for it:
///
/// ```swift
/// guard let tenant = TenantID(request.headers[tenantHeader] ?? "") else {
///     throw HTTPError(.badRequest, message: "X-Tenant must be 1 to 63 characters from a-z, 0-9 and -")
/// }
/// ```
public struct TenantID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The ID as it was given.
    public let rawValue: String

    /// The ID `rawValue`, or `nil` when it is empty, longer than 63 characters, or holds a
    /// character other than `a-z`, `0-9` and `-`.
    public init?(_ rawValue: String) {
        let bytes = rawValue.utf8
        guard (1...63).contains(bytes.count),
            bytes.allSatisfy({ (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D })
        else { return nil }
        self.rawValue = rawValue
    }

    /// The ID itself.
    public var description: String { rawValue }

    /// Orders IDs by their characters.
    public static func < (lhs: TenantID, rhs: TenantID) -> Bool { lhs.rawValue < rhs.rawValue }
}

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
