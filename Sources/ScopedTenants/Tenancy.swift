/// How an application root keeps its tenants: how many may be open, when an idle one is
/// evicted, and what each one's values are.
///
/// A tenant opens on the first scope opened for it (`ScopeRoot.withScope(tenant:_:operation:)`
/// or a server adapter's tenant resolver). Its `ScopedLifetime.tenant` services are built on
/// first use and shared by its scopes only. It is evicted, and its services closed newest
/// first, once it has had no open scope for ``idleTimeout``, or sooner when ``maximumOpen``
/// tenants are open and another needs room: then the least recently used idle one goes. A
/// tenant with a scope open is never evicted; when every open tenant has one, a new tenant's
/// scope is refused with ``TenantCapacityError``.
///
/// A root opens tenants once a tenancy is among its observers: it gives each root a directory
/// of its own, the root's `TenantProvider`.
///
/// ```swift
/// let root = ScopeRoot(
///     services: [SQLiteTenantDatabaseKey.self, SQLiteSessionKey.self],
///     observers: [
///         Tenancy(maximumOpen: 100, idleTimeout: .seconds(300)) { tenant, values in
///             values.sqliteConfiguration = SQLiteConfiguration(path: "tenants/\(tenant).sqlite")
///         }
///     ]
/// )
/// ```
public struct Tenancy: ScopeObserver {
    /// How many tenants may be open at once; `nil` for no bound.
    ///
    /// An evicted tenant no longer counts, while its services close beside the tenant that took
    /// its place.
    public var maximumOpen: Int?
    /// How long a tenant may stay open with no scope open before it is evicted; `nil` keeps
    /// open tenants until the root shuts down (or ``maximumOpen`` makes room).
    public var idleTimeout: Duration?
    /// Sets a tenant's values as it opens, over the root's.
    ///
    /// Its database's configuration, a variant, a feature. What it throws refuses the scope being opened (an unknown tenant),
    /// and the tenant does not open.
    ///
    /// Called once per opening of a tenant, while the root's tenants are locked: set values,
    /// do not wait.
    public var configure: @Sendable (TenantID, inout ScopedValues) throws -> Void

    /// A tenancy with the bounds given, whose tenants' values are set by `configure`.
    ///
    /// - Parameters:
    ///   - maximumOpen: how many tenants may be open at once; `nil` (the default) for no bound.
    ///   - idleTimeout: how long an open tenant may have no open scope before it is evicted;
    ///     five minutes by default.
    ///   - configure: sets a tenant's values over the root's; by default nothing.
    public init(
        maximumOpen: Int? = nil,
        idleTimeout: Duration? = .seconds(300),
        configure: @escaping @Sendable (TenantID, inout ScopedValues) throws -> Void = { _, _ in }
    ) {
        self.maximumOpen = maximumOpen
        self.idleTimeout = idleTimeout
        self.configure = configure
    }

    /// Takes none: a tenancy opens tenants, and is told nothing.
    public var events: ScopeObserverEvents { [] }

    /// A directory of this root's tenants, kept by these rules.
    public func forRoot(registering services: [any ScopedServiceKey.Type]) -> (any ScopeObserver)? {
        TenantDirectory(tenancy: self)
    }
}
