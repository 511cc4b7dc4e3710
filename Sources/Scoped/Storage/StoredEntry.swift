/// What diagnostics know about an entry a scope set: its key, its value's type, where it came from.
///
/// Made from a node's entry and its ``EntryInfo`` when a scope is described, never on the read path.
///
/// `@unchecked Sendable`: every property is an immutable value; `Any.Type` is a metatype.
struct StoredEntry: @unchecked Sendable {
    /// The key type (or, for objects, the object's type) the value is stored under.
    let keyType: Any.Type
    /// The static type of the value, as declared by its key.
    let valueType: Any.Type
    /// What kind of entry holds the value.
    let kind: EntryKind
    /// For a service provided from outside: its lifetime; `nil` for values and objects.
    let lifetime: ScopedLifetime?
    /// Where the value came from.
    let origin: EntryOrigin
    /// The named variant that set the value, if one did.
    let variant: String?

    init(
        keyType: Any.Type,
        valueType: Any.Type,
        kind: EntryKind,
        lifetime: ScopedLifetime? = nil,
        origin: EntryOrigin,
        variant: String?
    ) {
        self.keyType = keyType
        self.valueType = valueType
        self.kind = kind
        self.lifetime = lifetime
        self.origin = origin
        self.variant = variant
    }

    /// The name diagnostics show: the property name of an `@Entry`, a service's name, an
    /// object's type.
    var name: String {
        switch kind {
        case .value: ScopedValues.entryName(of: keyType)
        case .object: String(reflecting: keyType)
        case .service: (keyType as? any ScopedServiceKey.Type)?.name ?? String(describing: keyType)
        }
    }
}
