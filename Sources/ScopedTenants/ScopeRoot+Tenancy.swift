/// What a root's ``Tenancy`` tells and does beside opening tenants.
extension ScopeRoot {
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
    /// - Returns: whether the tenant was open; `false` when it was not, or the root has no
    ///   ``Tenancy``, and nothing was done.
    @discardableResult
    public func evictTenant(_ tenant: TenantID) async -> Bool {
        guard let directory = observers(TenantDirectory.self).first else { return false }
        return await directory.evict(tenant)
    }

    /// How many tenants this root has open, and how many it has evicted; zero of each on a root
    /// with no ``Tenancy``.
    public var tenantStatistics: TenantStatistics {
        observers(TenantDirectory.self).first?.statistics ?? TenantStatistics(open: 0, evicted: 0)
    }
}
