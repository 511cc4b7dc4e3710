/// A type-erased value stored in an ``OverrideTable``, with what diagnostics need to know about it.
///
/// `@unchecked Sendable`: every stored property is a `let` and never changes after `init`;
/// the subclass holds only a `Sendable` value.
package class AnyValueBox: @unchecked Sendable {
    /// The name diagnostics show for the entry.
    package let name: String
    /// The static type of the value, as declared by its key.
    package let valueType: Any.Type
    /// Where the value came from.
    package let origin: EntryOrigin

    init(name: String, valueType: Any.Type, origin: EntryOrigin) {
        self.name = name
        self.valueType = valueType
        self.origin = origin
    }

    /// A short description of the value, for diagnostics.
    package var valueDescription: String { "" }
}

/// An ``AnyValueBox`` holding a value of a known type.
package final class ValueBox<Value: Sendable>: AnyValueBox, @unchecked Sendable {
    package let value: Value

    init(_ value: Value, name: String, origin: EntryOrigin) {
        self.value = value
        super.init(name: name, valueType: Value.self, origin: origin)
    }

    override package var valueDescription: String { String(describing: value) }
}
