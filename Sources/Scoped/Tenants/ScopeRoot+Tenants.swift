import Synchronization

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
