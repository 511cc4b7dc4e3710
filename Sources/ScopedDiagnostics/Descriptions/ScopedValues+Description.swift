public import Scoped

extension ScopedValues {
    /// Describes this scope: every entry set in it or its ancestors, and every service the
    /// application root registered.
    ///
    /// Nothing is built or read to describe it: a debug endpoint may describe a live request.
    public func describe() -> ScopeDescription {
        let selected = selectedVariants
        var entries: [ScopeDescription.Entry] = []
        var named: Set<String> = []
        for stored in storedEntries where !Self.variantBookkeeping.contains(stored.name) {
            named.insert(stored.name)
            // A variant set the value unless a scope at another depth set the entry since.
            let variant = selected[stored.name].flatMap { $0.depth == stored.depth ? $0.name : nil }
            let origin: EntryOrigin =
                switch (stored.depth, variant) {
                case (0, nil): .root
                case (0, _): .configuration
                case (let depth, _): .override(depth: depth)
                }
            entries.append(
                ScopeDescription.Entry(
                    name: stored.name,
                    valueType: stored.valueType,
                    kind: stored.kind,
                    lifetime: stored.lifetime,
                    origin: origin,
                    variant: variant,
                    isBuilt: nil,
                    contributions: stored.contributions
                )
            )
        }
        for service in registeredServices where !named.contains(service.name) {
            entries.append(
                ScopeDescription.Entry(
                    name: service.name,
                    valueType: service.valueType,
                    kind: .service,
                    lifetime: service.lifetime,
                    origin: .default,
                    variant: nil,
                    isBuilt: service.isBuilt
                )
            )
        }
        return ScopeDescription(depth: depth, entries: entries.sorted { $0.name < $1.name })
    }

    /// The entries variants keep their registrations and selections in, which describe the
    /// variants of other entries rather than being described themselves.
    private static let variantBookkeeping: Set<String> = [VariantsKey.name, SelectedVariantsKey.name]
}
