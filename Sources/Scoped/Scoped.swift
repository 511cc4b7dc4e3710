// Naming in this module:
// - `Scoped…` names what a user declares, reads or provides: `ScopedKey`, `ScopedValues`,
//   `ScopedServiceKey`, `ScopedLifetime`, `ScopedError`, the `@Scoped`
//   property wrapper and `withScopedValues`.
// - `Scope…` names a scope itself and what happens to one: `ScopeRoot`, `ScopeOutcome`,
//   `ScopeCloseError`, `ScopeValidationError`, `withScope`; and the engine's `ServiceOwner`,
//   `ScopeRegistry` and `ScopeNode`.
// - What belongs to one type is nested in it: a validation's `ScopeValidationError.Problem`, a
//   close's `ScopeCloseError.Timeout`, an entry's `ScopedValues.EntryKind`.
// - `DeadlineWatchdog` is the adapter and database kit's one timer: it ends work past its
//   deadline, for the core's closes and hand-offs and for the database layers' statements.

/// A property wrapper that reads a value from the scope the code runs in.
///
/// It works like SwiftUI's `@Environment`: the value is read each time the property is
/// accessed, against the scope current at that moment, so a service created once at start-up
/// sees each request's values.
///
/// ```swift
/// struct MovieDetails {
///     @Scoped(\.movieRepository) var movies  // an entry
///     @Scoped(\.theme.cornerRadius) var radius  // a key path into an entry
///     @Scoped(Library.self) var library  // an object: `Library?`, nil when no scope set one
///
///     func branch() throws -> Library {
///         try ScopedValues.current.require(Library.self)  // an object that must be there
///     }
/// }
/// ```
///
/// > Important: Unlike SwiftUI's `@Environment(Library.self)`, an object read through the
/// > property wrapper is optional. SwiftUI stops the app when no view set the object, a bug
/// > seen at once on screen; on a server the same read may sit on a rare branch of one
/// > request, and stopping the process would fail every request in flight. Where the object
/// > must be there, read it with ``ScopedValues/require(_:)``, which throws
/// > ``ScopedError/missingObject(type:)`` naming the type, so that request fails alone; and
/// > validate the application root at start-up to find a missing object before serving.
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

    /// Reads the object of type `T` that an enclosing scope set with ``ScopedValues/set(_:)``,
    /// or `nil` if none did.
    ///
    /// There is no non-optional form: a required object is read with
    /// ``ScopedValues/require(_:)``, which throws rather than stopping the process.
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
