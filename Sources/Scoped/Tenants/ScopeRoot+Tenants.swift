/// Scopes of a tenant, opened on a root.
extension ScopeRoot {
    /// Runs `operation` in a new scope of the tenant `tenant`, whose values are the tenant's
    /// changed by `update`; closes the services the scope built when the operation ends.
    ///
    /// The scope, and every scope opened inside it, belongs to `tenant`: its
    /// ``ScopedLifetime/tenant`` services are `tenant`'s, opened with it if it was not open. See
    /// ``Tenancy``. With `tenant` `nil`, this is ``withScope(_:operation:)``: what an adapter
    /// whose resolver found no tenant opens.
    ///
    /// - Throws: ``ScopedError/tenantCapacity(limit:)`` when the tenant could not open for lack
    ///   of room, or what ``Tenancy/configure`` threw; then `operation` does not run. Otherwise
    ///   as ``withScope(_:operation:)``.
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
    /// - Throws: ``ScopedError/tenantCapacity(limit:)``, what ``Tenancy/configure`` threw, or
    ///   what `update` threw; no scope is then opened.
    public func openScope(tenant: TenantID?, _ update: (inout ScopedValues) throws -> Void = { _ in }) throws -> Scope {
        guard let tenant else { return try openScope(update) }
        let (values, context) = try openTenantScope(tenant, update)
        return Scope(opened: values, context)
    }

    /// Opens a scope of `tenant`, counted open on the tenant and on this root.
    ///
    /// On a test root, a tenant not open yet that is opened from one of the root's own scopes (a
    /// suite's scope) starts from that scope's values.
    @usableFromInline
    func openTenantScope(
        _ tenant: TenantID,
        _ update: (inout ScopedValues) throws -> Void
    ) throws -> (values: ScopedValues, context: ScopeContext) {
        guard context.registry.isTestRoot else { return try context.openTenantScope(tenant, update) }
        let current = ScopedValues.current
        let opener = current.scope.flatMap { $0.root === context ? current : nil }
        return try context.openTenantScope(tenant, update, base: opener)
    }

    /// Evicts the tenant `tenant` now, and returns once its services have closed.
    ///
    /// For a tenant whose settings changed, or that was suspended or deleted: its next scope
    /// opens it afresh, through ``Tenancy/configure`` (which may refuse it), with services built
    /// anew, and never before the evicted tenant's services have closed. The scopes open on it
    /// now, and the work handed off from them, finish on the services they have; those close
    /// when the last of them ends, as they would at the root's shutdown.
    ///
    /// ```swift
    /// registry.suspend(tenant)  // what your Tenancy.configure reads, so that it refuses the tenant
    /// await root.evictTenant(tenant)  // in-flight requests finish, then its services close
    /// ```
    ///
    /// - Returns: whether the tenant was open; `false` when it was not, and nothing was done.
    @discardableResult
    public func evictTenant(_ tenant: TenantID) async -> Bool {
        await rootContext.tenants.evict(tenant)
    }

    /// How many tenants this root has open, and how many it has evicted.
    public var tenantStatistics: TenantStatistics {
        rootContext.tenants.statistics
    }
}
