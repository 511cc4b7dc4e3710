import Scoped
import ScopedReload
import ScopedTenants

/// The server's open scopes and database connections, for checking that nothing leaks, and
/// which configuration it serves.
struct ServerStatistics: Codable, Equatable {
    /// Request scopes open now on the current root, not counting the one serving this request.
    var otherOpenScopes: Int
    /// The database's connections, on either backend: with tenants, the database of the
    /// request's tenant, and none for a request of no tenant.
    var database: DatabaseStatistics?
    /// The current root's generation: 1 at start-up, one more for each applied reload.
    var generation: Int
    /// Reloads applied and rejected since start-up.
    var reloads: ReloadCounts
    /// With tenants: how many the current root has open, and how many it evicted.
    var tenants: TenantStatistics? = nil
    /// With `settings.fromDatabase`: the version of the database's settings served, how it was
    /// read, and when the database last answered.
    var settings: SettingsStatus? = nil
    /// With `tenants.fromDatabase`: the tenant registry's version, and how it was read.
    var tenantRegistry: TenantRegistryStatus? = nil
    /// Work the current root's requests handed off (the history records) that never started
    /// or failed.
    var handOffs = HandOffCounts()

    /// What `ScopeRoot.handOffsNotStarted` and `handOffsFailed` say of the current root.
    struct HandOffCounts: Codable, Equatable {
        /// After-commit work whose request did not commit.
        var notStarted = 0
        /// Work that threw or ran past its timeout.
        var failed = 0
    }

    static func read(
        root: ReloadableScopeRoot,
        reloads: ReloadCounts,
        settings: SettingsStatus? = nil,
        tenantRegistry: TenantRegistryStatus? = nil,
        tenancy: Bool
    ) async throws -> ServerStatistics {
        let current = root.current
        let values = ScopedValues.current
        return ServerStatistics(
            otherOpenScopes: current.openScopeCount - 1,
            database: tenancy && values.tenant == nil ? nil : try await values.debugDatabase.statistics(),
            generation: root.generation,
            reloads: reloads,
            tenants: tenancy ? current.tenantStatistics : nil,
            settings: settings,
            tenantRegistry: tenantRegistry,
            handOffs: HandOffCounts(notStarted: current.handOffsNotStarted, failed: current.handOffsFailed)
        )
    }
}
