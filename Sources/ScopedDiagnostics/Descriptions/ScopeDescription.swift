public import Scoped

/// What a scope holds: every entry it knows, its value type, kind, origin and whether it is built.
///
/// Produced by `ScopedValues.describe()` without building anything; printable as text and
/// encodable as JSON, for a debug endpoint or a start-up log.
public struct ScopeDescription: Hashable, Sendable, Codable, CustomStringConvertible {
    /// One entry of the scope.
    public struct Entry: Hashable, Sendable, Codable, CustomStringConvertible {
        /// The entry's name: the property name of an `@Entry`, a service's name, an object's type.
        public let name: String
        /// The entry's value type.
        public let valueType: String
        /// Whether it is a plain value, an object, or a service.
        public let kind: ScopedValues.EntryKind
        /// For a service: its lifetime.
        ///
        /// `nil` for values and objects.
        public let lifetime: ScopedLifetime?
        /// Where its value came from.
        public let origin: EntryOrigin
        /// The named variant that set it, if one did.
        public let variant: String?
        /// For services: whether the owning scope has built it.
        ///
        /// `nil` for values and objects.
        public let isBuilt: Bool?
        /// For a `Contributions` list: each contribution, in order, with where it was made.
        ///
        /// `nil` for any other entry.
        public var contributions: [String]? = nil

        /// A description for logs and error messages.
        public var description: String {
            let kindText = lifetime.map { "\($0) \(kind)" } ?? kind.description
            var text = "\(name): \(valueType) [\(kindText)] from \(origin)"
            if let variant { text += " (variant \(variant))" }
            if let isBuilt { text += isBuilt ? " built" : " not built" }
            for contribution in contributions ?? [] { text += "\n    + \(contribution)" }
            return text
        }
    }

    /// How many scopes were opened below the root to reach this one; 0 for the root.
    public let depth: Int
    /// The entries, sorted by name.
    public let entries: [Entry]

    /// A description for logs and error messages.
    public var description: String {
        (["scope at depth \(depth):"] + entries.map { "  \($0)" }).joined(separator: "\n")
    }
}
