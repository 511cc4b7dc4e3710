/// What a tenant of a root has beside the tenant services it builds.
final class TenantContext: Sendable {
    /// The tenant's ID.
    let id: TenantID
    /// The context of the root it is a tenant of.
    let root: ScopeContext
    /// The scopes opened for the tenant and not yet closed; when the last closed tells how long
    /// the tenant has been idle.
    let openScopes = OpenScopes(tracksIdleTime: true)
    /// When the tenant was opened while its previous instance was still closing: that close,
    /// which this one waits for before it builds a service.
    let predecessorClose: Task<Void, Never>?

    init(id: TenantID, root: ScopeContext, predecessorClose: Task<Void, Never>?) {
        self.id = id
        self.root = root
        self.predecessorClose = predecessorClose
    }
}
