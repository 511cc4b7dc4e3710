/// Named variants of entries, registered in code and selected by name, so that configuration
/// can choose them: `movieRepository` = `sqlite` | `fixture`.
///
/// ```swift
/// var variants = ScopedVariants()
/// variants.register("sqlite", of: "movieRepository", \.movieRepository) { SQLiteMovieRepository() }
/// variants.register("fixture", of: "movieRepository", \.movieRepository) { InMemoryMovieRepository.fixture }
/// let root = try ScopeRoot(variants: variants) { try $0.selectVariant("sqlite", of: "movieRepository") }
/// ```
///
/// A scope selects one when it opens, with ``ScopedValues/selectVariant(_:of:)``.
public struct ScopedVariants: Sendable {
    private var variants: [String: [String: @Sendable (inout ScopedValues) -> Void]] = [:]

    /// Creates an empty set of variants.
    public init() {}

    /// Registers `variant` of `entry`: selecting it sets the entry at `keyPath` to a value
    /// that `makeValue` builds each time the variant is selected.
    public mutating func register<Value: Sendable>(
        _ variant: String,
        of entry: String,
        _ keyPath: WritableKeyPath<ScopedValues, Value> & Sendable,
        makeValue: @escaping @Sendable () -> Value
    ) {
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
