extension ScopedValues {
    /// Describes this scope: every entry set in it or its ancestors, and every service the application root registered.
    ///
    /// Nothing is built or read to describe it.
    public func describe() -> ScopeDescription {
        var entries: [ScopeDescription.Entry] = []
        var named: Set<String> = []
        for stored in node.entries {
            let name = stored.name
            named.insert(name)
            entries.append(
                ScopeDescription.Entry(
                    name: name,
                    valueType: String(reflecting: stored.valueType),
                    kind: stored.kind,
                    lifetime: stored.lifetime,
                    origin: stored.origin,
                    variant: stored.variant,
                    isBuilt: nil
                )
            )
        }
        for service in scope?.registry.services ?? [] where !named.contains(service.name) {
            let owner: ScopeContext? =
                switch service.lifetime {
                case .app: scope?.root
                case .tenant: scope?.tenant
                case .scope: scope?.lifetime == .scope ? scope : nil
                }
            let isBuilt = owner?.isBuilt(service.id) ?? false
            entries.append(
                ScopeDescription.Entry(
                    name: service.name,
                    valueType: service.valueType,
                    kind: .service,
                    lifetime: service.lifetime,
                    origin: .default,
                    variant: nil,
                    isBuilt: isBuilt
                )
            )
        }
        return ScopeDescription(depth: depth, entries: entries.sorted { $0.name < $1.name })
    }
}
