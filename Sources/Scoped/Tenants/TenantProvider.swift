/// Opens a root's tenants: what ``ScopeRoot/withScope(tenant:_:operation:)`` asks for the tenant
/// of a scope.
///
/// The kernel keeps the ``ScopedLifetime/tenant`` lifetime and the owner of each tenant's
/// services (``OpenTenant``); which tenants are open, for how long, and how many, is the
/// provider's. ScopedTenants' `Tenancy` is one: installed as a root's observer, it gives the
/// root a directory of its own (``ScopeObserver/forRoot(registering:)``), which the root finds
/// among its observers:
///
/// ```swift
/// let root = ScopeRoot(observers: [Tenancy(maximumOpen: 100)])
/// try await root.withScope(tenant: TenantID("acme")!) { … }
/// ```
///
/// A root with no provider refuses a tenant's scope with ``ScopedError/noTenantProvider(tenant:)``.
///
/// The root keeps its provider (the first installed observer that is one) apart from its other
/// observers: it asks it for tenants and tells it of shutdown, and tells it none of the events
/// of ``ScopeObserver``. A root discarded without shutting down releases its provider with it,
/// and so every tenant the provider held, unclosed.
public protocol TenantProvider: ScopeObserver {
    /// The tenant `id` of `root`, with one scope reserved on it, for the root to open.
    ///
    /// A tenant not open yet is opened with ``ScopeRoot/openTenant(_:startingFrom:after:configure:)``
    /// from `base`.
    ///
    /// - Parameters:
    ///   - id: the tenant the scope belongs to.
    ///   - root: the root the scope opens on.
    ///   - base: the values a tenant not open yet starts from: the root's, or, on a test root,
    ///     those of the test's scope that opens it.
    /// - Returns: the tenant, with the scope reserved (``OpenTenant/reserveScope()``).
    /// - Throws: why the tenant cannot open (an unknown tenant, no room); the scope is refused.
    func tenant(_ id: TenantID, of root: ScopeRoot, startingFrom base: ScopedValues) throws -> OpenTenant

    /// The root shuts down, and its scopes have ended: close every tenant (``OpenTenant/close()``)
    /// and refuse new ones. The root closes its app services once this returns.
    nonisolated(nonsending) func shutdown() async
}
