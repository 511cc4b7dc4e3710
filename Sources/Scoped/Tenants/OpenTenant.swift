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
        let failures = await context.close(.success, with: values.node)
        if !failures.isEmpty {
            context.registry.onCloseError(ScopeCloseError(failures: failures, outcome: .success))
        }
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
