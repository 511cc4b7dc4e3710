import Synchronization

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

/// A tenant of a root, open: the owner of the tenant's ``ScopedLifetime/tenant`` services, and
/// the values its scopes start from.
///
/// A ``TenantProvider`` opens one with ``ScopeRoot/openTenant(_:startingFrom:after:configure:)``,
/// keeps it while the tenant is open, and closes it when it evicts the tenant; the root opens
/// the tenant's scopes on it. Its services are built on first use by one of its scopes, and
/// closed by ``close()``, newest first, once its scopes have ended.
public final class OpenTenant: Sendable {
    /// The tenant's ID.
    public let id: TenantID
    /// The tenant's values: the root's (or those it was opened from), changed as it opened.
    public let values: ScopedValues
    /// The owner of the tenant's services.
    let context: ServiceOwner

    init(id: TenantID, values: ScopedValues, context: ServiceOwner) {
        self.id = id
        self.values = values
        self.context = context
    }

    /// Counts one more scope open on the tenant, before the root opens it.
    ///
    /// A provider reserves the scope under the lock with which it evicts, and hands the tenant to
    /// the root, which opens the scope (or, if the scope's values fail to set, counts it closed):
    /// so a tenant with a scope about to open is never taken for idle.
    public func reserveScope() {
        context.openScopes?.opened()
    }

    /// How many scopes are open on the tenant, nested ones and handed-off work included, and
    /// reserved ones.
    public var openScopeCount: Int {
        context.openScopes?.count ?? 0
    }

    /// How long the tenant has had no scope open; `nil` while one is open or reserved.
    ///
    /// Counted from the end of its last scope: what idle eviction and the choice of the tenant
    /// to evict for room read.
    public var idleTime: Duration? {
        guard let scopes = context.openScopes, scopes.count == 0 else { return nil }
        return .nanoseconds(NanosecondClock.nanoseconds() - scopes.idleSince)
    }

    /// Closes the tenant: waits for its scopes, and the work handed off from them, to end, then
    /// closes its services newest first.
    ///
    /// Close failures go to the root's close-error handler. Call it after the tenant is no longer
    /// handed out; a second call closes nothing.
    nonisolated(nonsending) public func close() async {
        await context.openScopes?.drained()
        await context.closeReportingFailures(with: values.node)
    }
}

/// What a tenant of a root has beside the services it builds and its open scopes.
final class TenantContext: Sendable {
    /// The tenant's ID.
    let id: TenantID
    /// When the tenant was opened while its previous instance was still closing: that close,
    /// which this one waits for before it builds a service.
    let predecessorClose: Task<Void, Never>?

    init(id: TenantID, predecessorClose: Task<Void, Never>?) {
        self.id = id
        self.predecessorClose = predecessorClose
    }
}

/// Scopes of a tenant, opened on a root.
extension ScopeRoot {
    /// Runs `operation` in a new scope of the tenant `tenant`, whose values are the tenant's
    /// changed by `update`; closes the services the scope built when the operation ends.
    ///
    /// The scope, and every scope opened inside it, belongs to `tenant`: its
    /// ``ScopedLifetime/tenant`` services are `tenant`'s, opened with it if it was not open, by
    /// the root's ``TenantProvider``. With `tenant` `nil`, this is ``withScope(_:operation:)``:
    /// what an adapter whose resolver found no tenant opens.
    ///
    /// - Throws: what the root's provider threw when the tenant could not open (no room, an
    ///   unknown tenant), or ``ScopedError/noTenantProvider(tenant:)``; then `operation` does not
    ///   run. Otherwise as ``withScope(_:operation:)``.
    @inlinable
    nonisolated(nonsending) public func withScope<R>(
        tenant: TenantID?,
        _ update: (inout ScopedValues) throws -> Void = { _ in },
        operation: () async throws -> R
    ) async throws -> R {
        guard let tenant else { return try await withScope(update, operation: operation) }
        let (values, context) = try openTenantScope(tenant, update)
        return try await runInOpenScope(values, context, operation: operation)
    }

    /// Opens a scope of the tenant `tenant` that stays open until you close it.
    ///
    /// See ``openScope(_:)`` and ``withScope(tenant:_:operation:)``. With `tenant` `nil`, this is
    /// ``openScope(_:)``.
    ///
    /// - Throws: what the root's provider threw, ``ScopedError/noTenantProvider(tenant:)``, or
    ///   what `update` threw; no scope is then opened.
    public func openScope(tenant: TenantID?, _ update: (inout ScopedValues) throws -> Void = { _ in }) throws -> Scope {
        guard let tenant else { return try openScope(update) }
        let (values, context) = try openTenantScope(tenant, update)
        return Scope(opened: values, context)
    }

    /// Opens the tenant `id` of this root, for a ``TenantProvider``.
    ///
    /// - Parameters:
    ///   - id: the tenant.
    ///   - base: the values the tenant starts from (what the provider was given).
    ///   - predecessor: the close of the tenant's previous instance, if it is still running: the
    ///     tenant builds no service before it ends, so that a tenant's file is never opened while
    ///     its previous instance is still closing it.
    ///   - configure: sets the tenant's values: its database's configuration, a variant.
    /// - Returns: the owner of the tenant's services, with the values `base` changed by
    ///   `configure`.
    /// - Throws: what `configure` throws, or ``ScopedError/scopeEnded(entry:)`` once the root has
    ///   shut down.
    public func openTenant(
        _ id: TenantID,
        startingFrom base: ScopedValues,
        after predecessor: Task<Void, Never>? = nil,
        configure: (inout ScopedValues) throws -> Void
    ) throws -> OpenTenant {
        guard !context.isClosed.load(ordering: .acquiring) else {
            throw ScopedError.scopeEnded(entry: "tenant \(id)")
        }
        let tenantContext = ServiceOwner(tenant: id, of: context, after: predecessor)
        // A base of its own, so that a read in a tenant's scope probes at most two tables.
        var values = ScopedValues(node: base.node.flattened(depth: 1, scope: tenantContext))
        try configure(&values)
        values.node = values.node.asOwnNode()
        return OpenTenant(id: id, values: values, context: tenantContext)
    }

    /// Opens a scope of `tenant`, reserved on the tenant by the root's provider and counted open
    /// on the root.
    ///
    /// On a test root, a tenant not open yet that is opened from one of the root's own scopes (a
    /// suite's scope) starts from that scope's values.
    @usableFromInline
    func openTenantScope(
        _ tenant: TenantID,
        _ update: (inout ScopedValues) throws -> Void
    ) throws -> (values: ScopedValues, context: ServiceOwner) {
        guard let provider = tenantProvider else {
            throw ScopedError.noTenantProvider(tenant: tenant)
        }
        var base = values
        if context.registry.isTestRoot, case let current = ScopedValues.current, current.scope?.root === context {
            base = current
        }
        let opened = try provider.tenant(tenant, of: self, startingFrom: base)
        return try opened.values.openChildScope(of: opened.context, update, countedInTenant: true)
    }
}

extension ScopedValues {
    /// The tenant the current scope belongs to, fixed when the scope was opened; `nil` in the
    /// root's own values and in scopes of no tenant.
    ///
    /// Scopes opened inside a tenant's scope (a `withScope`, work handed off with `handOff`)
    /// belong to the same tenant, and so do the tenant's ``ScopedLifetime/tenant`` services
    /// while they are built.
    public var tenant: TenantID? { scope?.tenantID }
}
