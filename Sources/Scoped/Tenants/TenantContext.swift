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
