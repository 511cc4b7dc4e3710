extension ScopedValues {
    /// Sets `entry` to its variant named `variant`, registered on the application root.
    ///
    /// Variants exist to be chosen by configuration: selected on the root, the value's origin
    /// is ``EntryOrigin/configuration``; selected when a scope opens, it is an override at
    /// that scope's depth. Diagnostics name the variant either way.
    ///
    /// - Throws: ``ScopedError/unknownVariant(entry:variant:known:)`` naming the variants that
    ///   exist, when the root registered no such variant.
    public mutating func selectVariant(_ variant: String, of entry: String) throws {
        let variants = scope?.registry.variants ?? ScopedVariants()
        guard let apply = variants.variant(variant, of: entry) else {
            throw ScopedError.unknownVariant(entry: entry, variant: variant, known: variants.names(of: entry))
        }
        let (savedVariant, savedStamp) = (self.variant, stamp)
        self.variant = variant
        if depth == 0 { stamp = .configuration }
        defer { (self.variant, stamp) = (savedVariant, savedStamp) }
        apply(&self)
    }
}
