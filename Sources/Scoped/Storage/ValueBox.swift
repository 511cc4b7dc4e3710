/// A type-erased value stored in an ``OverrideTable``, with what diagnostics need to know about it.
///
/// `@unchecked Sendable`: every stored property is a `let` and never changes after `init`;
/// the subclass holds only a `Sendable` value.
package class AnyValueBox: @unchecked Sendable {
    /// The name diagnostics show for the entry.
    package let name: String
    /// The static type of the value, as declared by its key.
    package let valueType: Any.Type
    /// What kind of entry holds the value.
    package let kind: EntryKind
    /// Where the value came from.
    package let origin: EntryOrigin
    /// The named variant that set the value, if one did.
    package let variant: String?

    init(name: String, valueType: Any.Type, kind: EntryKind, origin: EntryOrigin, variant: String?) {
        self.name = name
        self.valueType = valueType
        self.kind = kind
        self.origin = origin
        self.variant = variant
    }

    /// A short description of the value, for diagnostics.
    package var valueDescription: String { "" }
}

/// An ``AnyValueBox`` holding a value of a known type.
package final class ValueBox<Value: Sendable>: AnyValueBox, @unchecked Sendable {
    package let value: Value

    init(_ value: Value, name: String, kind: EntryKind, origin: EntryOrigin, variant: String? = nil) {
        self.value = value
        super.init(name: name, valueType: Value.self, kind: kind, origin: origin, variant: variant)
    }

    override package var valueDescription: String { String(describing: value) }
}
