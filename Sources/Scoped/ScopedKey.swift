/// A key for accessing values in ``ScopedValues``.
///
/// Declare entries with ``Entry()`` where you can; write a key by hand when you need one,
/// exactly as you would write a SwiftUI `EnvironmentKey`:
///
/// ```swift
/// private struct ThemeKey: ScopedKey {
///     static let defaultValue = Theme.standard
/// }
///
/// extension ScopedValues {
///     var theme: Theme {
///         get { self[ThemeKey.self] }
///         set { self[ThemeKey.self] = newValue }
///     }
/// }
/// ```
///
/// Declare `defaultValue` with `static let` to share one default across the process: Swift
/// initializes it lazily, on first read, exactly once. A computed `static var` is evaluated
/// on every read that finds no override.
public protocol ScopedKey {
    /// The type of the entry's value.
    associatedtype Value: Sendable

    /// The value read where no enclosing scope has set one.
    static var defaultValue: Value { get }

    /// A stand-in that tests read when they did not override the entry; `nil` by default.
    ///
    /// Give one to mark the entry *live-only*: its default (a database, a clock, a network
    /// client) never runs in a test scope. A read there that finds no override records a test
    /// failure naming the entry and returns this stand-in instead.
    static var testValue: Value? { get }
}

extension ScopedKey {
    /// `nil`: a key has no test stand-in unless it declares one.
    public static var testValue: Value? { nil }
}
