/// A variant was selected that the application root did not register
/// (`ScopedValues.selectVariant(_:of:)`).
public struct UnknownVariantError: Error, Hashable, CustomStringConvertible {
    /// The entry whose variant was selected.
    public let entry: String
    /// The variant selected.
    public let variant: String
    /// The variants of ``entry`` the root registered, sorted.
    public let known: [String]

    /// The error of a selection of `variant` for `entry`, whose variants are `known`.
    public init(entry: String, variant: String, known: [String]) {
        self.entry = entry
        self.variant = variant
        self.known = known
    }

    /// A description for logs and error messages.
    public var description: String {
        "Unknown variant '\(variant)' of entry '\(entry)'. "
            + (known.isEmpty
                ? "The application root registered no variants of '\(entry)'."
                : "Known variants: \(known.joined(separator: ", ")).")
    }
}
