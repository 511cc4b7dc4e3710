// Naming in this module:
// - `Scoped…` names what a user declares, reads or provides: `ScopedKey`, `ScopedValues`,
//   `ScopedServiceKey`, `ScopedLifetime`, `ScopedVariants`, `ScopedError`, the `@Scoped`
//   property wrapper and `withScopedValues`.
// - `Scope…` names a scope itself and what happens to one: `ScopeRoot`, `ScopeOutcome`,
//   `ScopeCloseError`, `ScopeDescription`, `ScopeProblem`, `withScope`; and the engine's
//   `ScopeContext`, `ScopeRegistry` and `ScopeNode`.
// - `Entry…` names what diagnostics say about one entry: `EntryKind`, `EntryOrigin`.

/// A property wrapper that reads a value from the scope the code runs in.
///
/// It works like SwiftUI's `@Environment`: the value is read each time the property is
/// accessed, against the scope current at that moment, so a service created once at start-up
/// sees each request's values.
///
/// ```swift
/// struct MovieDetails {
///     @Scoped(\.movieRepository) var movies          // an entry
///     @Scoped(\.theme.cornerRadius) var radius       // a key path into an entry
///     @Scoped(Library.self) var library              // a required object
///     @Scoped(Library.self) var maybeLibrary: Library?  // an optional object
/// }
/// ```
///
/// > Important: Reading a required object that no scope set stops the process with a message
/// > naming the type, as SwiftUI does. Use the optional form, or
/// > ``ScopedValues/require(_:)``, where a missing object must not trap; validate the
/// > application root at start-up to catch it before serving.
@propertyWrapper
public struct Scoped<Value: Sendable>: Sendable {
    @usableFromInline
    let read: @Sendable (inout ScopedValues) -> Value

    /// Reads the entry, or the value inside an entry, at a key path: `@Scoped(\.movieRepository)`.
    ///
    /// The key path literal becomes a function, so a read calls the entry's getter directly
    /// rather than going through key-path projection, which costs several times a task-local
    /// read.
    @inlinable
    public init(_ keyPath: @escaping @Sendable (ScopedValues) -> Value) {
        read = { keyPath($0) }
    }

    /// Reads the object of type `Value` that an enclosing scope set with ``ScopedValues/set(_:)``.
    ///
    /// Stops the process with a message naming the type if no scope set one.
    @inlinable
    public init(_ type: Value.Type) {
        read = { (values: inout ScopedValues) in
            guard let object = values.object(Value.self) else {
                fatalError(ScopedError.missingObject(type: String(reflecting: Value.self)).description)
            }
            return object
        }
    }

    /// Reads the object of type `T` that an enclosing scope set, or `nil` if none did.
    @inlinable
    public init<T: Sendable>(_ type: T.Type) where Value == T? {
        read = { (values: inout ScopedValues) in values.object(T.self) }
    }

    /// The value, read from the current scope.
    @inlinable
    public var wrappedValue: Value {
        ScopedValues.withCurrent(read)
    }
}
