public import Scoped

/// Named variants of entries, registered in code and selected by name, so that configuration
/// can choose them: `movieRepository` = `sqlite` | `fixture`.
///
/// ```swift
/// var variants = ScopedVariants()
/// variants.register("sqlite", of: \.movieRepository) { SQLiteMovieRepository() }
/// variants.register("fixture", of: \.movieRepository) { InMemoryMovieRepository.fixture() }
/// let root = try ScopeRoot {
///     $0.variants = variants
///     try $0.selectVariant("sqlite", of: "movieRepository")
/// }
/// ```
///
/// The root holds them as its entry ``Scoped/ScopedValues/variants``, so every scope opened on
/// it can select one when it opens, with ``Scoped/ScopedValues/selectVariant(_:of:)``. The
/// entry's name, which configuration uses, is the name diagnostics show for it: the property
/// name of an `@Entry`.
public struct ScopedVariants: Sendable {
    private var variants: [String: [String: @Sendable (inout ScopedValues) -> Void]] = [:]

    /// Creates an empty set of variants.
    public init() {}

    /// Registers `variant` of the entry at `keyPath`: selecting it sets the entry to a value
    /// that `makeValue` builds each time the variant is selected.
    ///
    /// The entry's name is learned by reading `keyPath` once on empty values, which reads the
    /// entry's default; `makeValue` does not run until the variant is selected.
    ///
    /// - Precondition: `keyPath` reads an entry of `ScopedValues` (an `@Entry` property or
    ///   one written with a `ScopedKey`).
    public mutating func register<Value: Sendable>(
        _ variant: String,
        of keyPath: any WritableKeyPath<ScopedValues, Value> & Sendable,
        makeValue: @escaping @Sendable () -> Value
    ) {
        guard let entry = ScopedValues.entryName(of: keyPath) else {
            preconditionFailure("ScopedVariants: \(keyPath) does not read an entry of ScopedValues")
        }
        variants[entry, default: [:]][variant] = { $0[keyPath: keyPath] = makeValue() }
    }

    /// The entries that have variants, sorted.
    public var entries: [String] { variants.keys.sorted() }

    /// The names of the variants of `entry`, sorted.
    public func names(of entry: String) -> [String] { (variants[entry] ?? [:]).keys.sorted() }

    func variant(_ variant: String, of entry: String) -> (@Sendable (inout ScopedValues) -> Void)? {
        variants[entry]?[variant]
    }
}
