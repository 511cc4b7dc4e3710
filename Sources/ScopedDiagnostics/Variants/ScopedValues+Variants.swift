public import Scoped

extension ScopedValues {
    /// The named variants scopes may select, set on the application root: none by default.
    public var variants: ScopedVariants {
        get { self[VariantsKey.self] }
        set { self[VariantsKey.self] = newValue }
    }

    /// Sets `entry` to its variant named `variant`, one of ``variants``.
    ///
    /// Variants exist to be chosen by configuration: selected on the root, the value's origin
    /// is ``EntryOrigin/configuration``; selected when a scope opens, it is an override at
    /// that scope's depth. ``describe()`` names the variant either way.
    ///
    /// - Throws: ``UnknownVariantError`` naming the variants that exist, when ``variants`` has
    ///   no such variant.
    public mutating func selectVariant(_ variant: String, of entry: String) throws {
        let variants = self.variants
        guard let apply = variants.variant(variant, of: entry) else {
            throw UnknownVariantError(entry: entry, variant: variant, known: variants.names(of: entry))
        }
        apply(&self)
        self[SelectedVariantsKey.self][entry] = SelectedVariant(name: variant, depth: depth)
    }

    /// The variants selected in these values or the scopes they were opened in, by entry.
    var selectedVariants: [String: SelectedVariant] { self[SelectedVariantsKey.self] }
}

/// A variant selected for an entry, and the depth of the scope that selected it: the entry's
/// value is the variant's while no deeper scope set the entry.
struct SelectedVariant: Sendable, Hashable {
    let name: String
    let depth: Int
}

enum VariantsKey: ScopedKey {
    static let defaultValue = ScopedVariants()
    static var name: String { "variants" }
}

enum SelectedVariantsKey: ScopedKey {
    static let defaultValue: [String: SelectedVariant] = [:]
    static var name: String { "selectedVariants" }
}
