/// A heap box for a value: services a scope built, and entry values too large to live in a
/// ``ScopeNode`` slot.
///
/// `@unchecked Sendable`: the subclass holds one `let` of a `Sendable` type.
@usableFromInline
package class AnyValueBox: @unchecked Sendable {
    @usableFromInline
    init() {}
}

/// An ``AnyValueBox`` holding a value of a known type.
@usableFromInline
package final class ValueBox<Value: Sendable>: AnyValueBox, @unchecked Sendable {
    @usableFromInline
    package let value: Value

    @usableFromInline
    init(_ value: Value) {
        self.value = value
    }
}
