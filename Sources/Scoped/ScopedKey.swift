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
/// A hand-written key is a first-class spelling, not a fallback: it needs no macro, so a
/// package that builds Scoped without its `Macros` trait never compiles swift-syntax, and the
/// entry behaves exactly as an `@Entry` one. Diagnostics and configuration name it by
/// ``name``: `ThemeKey` is the entry `theme`, as `@Entry var theme` would be.
///
/// Declare `defaultValue` with `static let` to share one default across the process: Swift
/// initializes it lazily, on first read, exactly once. A computed `static var` is evaluated
/// on every read that finds no override.
public protocol ScopedKey {
    /// The type of the entry's value.
    associatedtype Value: Sendable

    /// The value read where no enclosing scope has set one.
    static var defaultValue: Value { get }

    /// The entry's name in diagnostics and configuration (variants are selected by it).
    ///
    /// By default the key's type name without a `Key` suffix, lower-camel-cased (`ThemeKey` →
    /// `theme`, `RequestIDKey` → `requestID`), and the property's name for an `@Entry`.
    static var name: String { get }

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

    /// The key's type name without a `Key` suffix, lower-camel-cased; an `@Entry`'s property name.
    public static var name: String { KeyNames.entryName(fromTypeName: String(describing: Self.self)) }
}

/// How a key's type name becomes the entry's name, for value and service keys alike.
enum KeyNames {
    /// `ThemeKey` → `theme`, `RequestIDKey` → `requestID`, `URLSessionKey` → `urlSession`, and
    /// `__Key_name` (the key `@Entry` writes) → `name`.
    static func entryName(fromTypeName typeName: String) -> String {
        if typeName.hasPrefix("__Key_") { return String(typeName.dropFirst(6)) }
        var name = Substring(typeName)
        if name.hasSuffix("Key"), name.count > 3 { name.removeLast(3) }
        // A leading acronym is lowercased as a whole, except its last capital when a word
        // follows it, as Swift's naming guidelines do: `URLSession` → `urlSession`, `ID` → `id`.
        let capitals = name.prefix { $0.isUppercase }.count
        let lowered = capitals == name.count ? capitals : max(1, capitals - 1)
        return name.prefix(lowered).lowercased() + name.dropFirst(lowered)
    }
}

/// Declares an entry of ``ScopedValues``: `@Entry var name: Type = defaultValue`.
///
/// Use it inside `extension ScopedValues`, as SwiftUI's `@Entry` inside
/// `extension EnvironmentValues`:
///
/// ```swift
/// extension ScopedValues {
///     @Entry var movieRepository: any MovieRepository = SQLiteMovieRepository()
///     @Entry var userName: String? = nil
/// }
/// ```
///
/// It expands to a getter and setter through `self[__Key_name.self]` and a private key type
/// whose default is a `static let`: evaluated on first read, exactly once per process.
/// Optional entries may omit the default; it is `nil`.
///
/// It needs the package's `Macros` trait (on by default). Without it there is no macro to
/// expand: the declaration is unavailable, so that the compiler names the trait where `@Entry`
/// is used. (It also warns here that the plug-in is missing; SwiftPM does not show a package
/// dependency's warnings to the package that depends on it.)
#if !Macros
@available(
    *,
    unavailable,
    message:
        "@Entry needs the Scoped package's \"Macros\" trait: .package(url: …, from: …, traits: [\"Macros\"]); or declare the entry with a ScopedKey"
)
#endif
@attached(accessor, names: named(get), named(set))
@attached(peer, names: prefixed(__Key_))
public macro Entry() = #externalMacro(module: "ScopedMacros", type: "EntryMacro")

/// Declares a live-only entry of ``ScopedValues``, whose default never runs in tests:
/// `@Entry(testValue: stand-in) var name: Type = defaultValue`.
///
/// A test scope that reads the entry without overriding it records a test failure naming
/// the entry and reads `testValue` instead of building the default:
///
/// ```swift
/// extension ScopedValues {
///     @Entry(testValue: UnimplementedMailer())
///     var mailer: any Mailer = SMTPMailer()
/// }
/// ```
///
/// Like ``Entry()``, it needs the package's `Macros` trait.
#if !Macros
@available(
    *,
    unavailable,
    message:
        "@Entry needs the Scoped package's \"Macros\" trait: .package(url: …, from: …, traits: [\"Macros\"]); or declare the entry with a ScopedKey"
)
#endif
@attached(accessor, names: named(get), named(set))
@attached(peer, names: prefixed(__Key_))
public macro Entry<T>(testValue: T) = #externalMacro(module: "ScopedMacros", type: "EntryMacro")
