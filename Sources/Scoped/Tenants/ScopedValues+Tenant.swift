extension ScopedValues {
    /// The tenant the current scope belongs to, fixed when the scope was opened; `nil` in the
    /// root's own values and in scopes of no tenant.
    ///
    /// Scopes opened inside a tenant's scope (a `withScope`, work handed off with `handOff`)
    /// belong to the same tenant, and so do the tenant's ``ScopedLifetime/tenant`` services
    /// while they are built.
    public var tenant: TenantID? { scope?.tenantID }
}
