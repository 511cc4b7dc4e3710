/// What a scope holds: every entry it knows, its value type, kind, origin and whether it is built.
///
/// Produced by ``ScopedValues/describe()`` without building anything; printable as text and
/// encodable as JSON, for a debug endpoint or a start-up log.
public struct ScopeDescription: Hashable, Sendable, Codable, CustomStringConvertible {
    /// One entry of the scope.
    public struct Entry: Hashable, Sendable, Codable, CustomStringConvertible {
        /// The entry's name: the property name of an `@Entry`, a service's name, an object's type.
        public let name: String
        /// The entry's value type.
        public let valueType: String
        /// Whether it is a plain value, an object, or a service with a lifetime.
        public let kind: EntryKind
        /// Where its value came from.
        public let origin: EntryOrigin
        /// The named variant that set it, if one did.
        public let variant: String?
        /// For services: whether the owning scope has built it. `nil` for values and objects.
        public let isBuilt: Bool?

        public var description: String {
            var text = "\(name): \(valueType) [\(kind)] from \(origin)"
            if let variant { text += " (variant \(variant))" }
            if let isBuilt { text += isBuilt ? " built" : " not built" }
            return text
        }
    }

    /// How many scopes were opened below the root to reach this one; 0 for the root.
    public let depth: Int
    /// The entries, sorted by name.
    public let entries: [Entry]

    public var description: String {
        (["scope at depth \(depth):"] + entries.map { "  \($0)" }).joined(separator: "\n")
    }
}

extension ScopedValues {
    /// Describes this scope: every entry set in it or its ancestors, and every service the
    /// application root registered. Nothing is built or read to describe it.
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
                    origin: stored.origin,
                    variant: stored.variant,
                    isBuilt: nil
                )
            )
        }
        for service in scope?.registry.services ?? [] where !named.contains(service.name) {
            let owner = service.lifetime == .app ? scope?.root : (scope?.lifetime == .scope ? scope : nil)
            let isBuilt = owner?.isBuilt(service.id) ?? false
            entries.append(
                ScopeDescription.Entry(
                    name: service.name,
                    valueType: service.valueType,
                    kind: EntryKind(service.lifetime),
                    origin: .default,
                    variant: nil,
                    isBuilt: isBuilt
                )
            )
        }
        return ScopeDescription(depth: depth, entries: entries.sorted { $0.name < $1.name })
    }
}
