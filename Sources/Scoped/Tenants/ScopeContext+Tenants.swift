import Synchronization

/// Opening scopes of a tenant on a root.
extension ScopeContext {
    /// Opens a scope of `tenant` on this scope's root, its values the tenant's changed by
    /// `update`, counted open on the tenant and on the root.
    ///
    /// `base`: the values a tenant not open yet starts from; by default the root's.
    ///
    /// - Throws: what opening the tenant throws (``TenantDirectory/acquire(_:root:rootValues:)``),
    ///   or what `update` throws; no scope is then opened.
    func openTenantScope(
        _ tenant: TenantID,
        _ update: (inout ScopedValues) throws -> Void,
        base: ScopedValues? = nil
    ) throws -> (values: ScopedValues, context: ScopeContext) {
        let root = root
        guard let tenants = root.rootContext?.tenants, let node = root.state.withLock({ $0.node }) else {
            throw ScopedError.scopeEnded(entry: "tenant \(tenant)")
        }
        let opened = try tenants.acquire(tenant, root: root, rootValues: base ?? ScopedValues(node: ScopeNode(node)))
        return try opened.values.openChildScope(of: opened.context, update, countedInTenant: true)
    }
}

extension ScopedValues {
    /// Runs `operation` in a new scope of `tenant` on the root of these values' scope; the tenant,
    /// if it is not open yet, starts from these values rather than the root's.
    ///
    /// What ScopedTesting's `.scoped(tenant:)` trait runs a test in when its suite's scope is
    /// current: the test's tenant keeps what the suite set (its mocks, its database). An
    /// application opens a tenant's scope on its root, with `ScopeRoot.withScope(tenant:_:operation:)`.
    ///
    /// - Parameters:
    ///   - tenant: The tenant whose scope to open.
    ///   - update: Changes the new scope's values.
    ///   - operation: Runs in the new scope.
    /// - Returns: What `operation` returns.
    /// - Throws: ``ScopedError/scopeEnded(entry:)`` outside every root; what opening the tenant
    ///   or `update` throws, and then `operation` does not run; what `operation` throws.
    public func withTenantScope<R>(
        _ tenant: TenantID,
        _ update: (inout ScopedValues) throws -> Void,
        operation: () async throws -> R
    ) async throws -> R {
        let (values, context) = try parentScope().openTenantScope(tenant, update, base: self)
        return try await runInOpenScope(values, context, operation: operation)
    }
}
