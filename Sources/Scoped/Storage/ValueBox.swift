/// A heap box for a value: services a scope built, and the entry values a ``ScopeNode`` holds.
///
/// Boxes never change once made, so nodes and scopes share them instead of copying values.
///
/// `@unchecked Sendable`: the subclass holds one `let` of a `Sendable` type.
@usableFromInline
class AnyValueBox: @unchecked Sendable {
    @usableFromInline
    init() {}

    /// The type of the value the box holds, for diagnostics.
    var valueType: Any.Type { Never.self }
}

/// An ``AnyValueBox`` holding a value of a known type.
@usableFromInline
final class ValueBox<Value: Sendable>: AnyValueBox, @unchecked Sendable {
    @usableFromInline
    let value: Value

    @usableFromInline
    init(_ value: Value) {
        self.value = value
    }

    /// `Value`.
    override var valueType: Any.Type { Value.self }
}
