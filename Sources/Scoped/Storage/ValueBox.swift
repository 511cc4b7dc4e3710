/// A type-erased value stored in a ``ScopeNode``, with what diagnostics need to know about it.
///
/// `@unchecked Sendable`: every stored property is a `let` and never changes after `init`;
/// the subclass holds only a `Sendable` value.
@usableFromInline
package class AnyValueBox: @unchecked Sendable {
    /// The key type (or, for objects, the object's type) the value is stored under.
    package let keyType: Any.Type
    /// The static type of the value, as declared by its key.
    package let valueType: Any.Type
    /// What kind of entry holds the value.
    package let kind: EntryKind
    /// Where the value came from.
    package let origin: EntryOrigin
    /// The named variant that set the value, if one did.
    package let variant: String?

    init(keyType: Any.Type, valueType: Any.Type, kind: EntryKind, origin: EntryOrigin, variant: String?) {
        self.keyType = keyType
        self.valueType = valueType
        self.kind = kind
        self.origin = origin
        self.variant = variant
    }

    /// The name diagnostics show: the property name of an `@Entry`, a service's name, an
    /// object's type. Computed on demand, so storing a value never formats a type name.
    package var name: String {
        switch kind {
        case .value: ScopedValues.entryName(of: keyType)
        case .object: String(reflecting: keyType)
        case .app, .scope: (keyType as? any ScopedServiceKey.Type)?.name ?? String(describing: keyType)
        }
    }
}

/// An ``AnyValueBox`` holding a value of a known type.
@usableFromInline
package final class ValueBox<Value: Sendable>: AnyValueBox, @unchecked Sendable {
    @usableFromInline
    package let value: Value

    @usableFromInline
    init(_ value: Value, keyType: Any.Type, kind: EntryKind, origin: EntryOrigin, variant: String? = nil) {
        self.value = value
        super.init(keyType: keyType, valueType: Value.self, kind: kind, origin: origin, variant: variant)
    }
}
