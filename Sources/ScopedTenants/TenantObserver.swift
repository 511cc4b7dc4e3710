/// Told how many tenants a root has open: an observer of the root (`ScopeRoot(observers:)`)
/// that also takes the changes of its tenants, which the root's ``Tenancy`` tells.
///
/// ScopedInstrumentation's observer is one: it records the count as a gauge, and counts
/// evictions.
public protocol TenantObserver: ScopeObserver {
    /// The root's tenants changed: `open` are open now, after a tenant opened or was evicted
    /// (`evicted`), or the root closed them all.
    func tenantsChanged(open: Int, evicted: Bool)
}
