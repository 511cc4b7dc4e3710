/// A scope of a tenant could not open: ``limit`` tenants are open, each with a scope running,
/// so none could be evicted to make room (``Tenancy/maximumOpen``).
///
/// Nothing was opened for the tenant; a server answers it as being unavailable for now (503),
/// and a later request may find room.
public struct TenantCapacityError: Error, Hashable, CustomStringConvertible {
    /// How many tenants may be open at once.
    public let limit: Int

    /// The error of a root whose `limit` tenants all have scopes running.
    public init(limit: Int) {
        self.limit = limit
    }

    /// A description for logs and error messages.
    public var description: String {
        "All \(limit) open tenants have scopes running, so none could be evicted for a new one; "
            + "retry later, or raise the tenancy's maximumOpen."
    }
}
