#if Macros
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
@attached(accessor, names: named(get), named(set))
@attached(peer, names: prefixed(__Key_))
public macro Entry<T>(testValue: T) = #externalMacro(module: "ScopedMacros", type: "EntryMacro")
#else
// Without the trait there is no macro to expand: these declarations only make the compiler name
// the trait where `@Entry` is used. (It also warns here that their plug-in is missing; SwiftPM
// does not show a package dependency's warnings to the package that depends on it.)
@available(
    *,
    unavailable,
    message:
        "@Entry needs the Scoped package's \"Macros\" trait: .package(url: …, from: …, traits: [\"Macros\"]); or declare the entry with a ScopedKey"
)
@attached(accessor, names: named(get), named(set))
@attached(peer, names: prefixed(__Key_))
public macro Entry() = #externalMacro(module: "ScopedMacros", type: "EntryMacro")

@available(
    *,
    unavailable,
    message:
        "@Entry needs the Scoped package's \"Macros\" trait: .package(url: …, from: …, traits: [\"Macros\"]); or declare the entry with a ScopedKey"
)
@attached(accessor, names: named(get), named(set))
@attached(peer, names: prefixed(__Key_))
public macro Entry<T>(testValue: T) = #externalMacro(module: "ScopedMacros", type: "EntryMacro")
#endif
