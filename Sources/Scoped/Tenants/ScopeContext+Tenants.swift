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
