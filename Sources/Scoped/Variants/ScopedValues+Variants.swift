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
        let (savedOrigin, savedVariant) = (node.stampedOrigin, node.stampedVariant)
        stamp(origin: depth == 0 ? .configuration : savedOrigin, variant: VariantNames.index(of: variant))
        defer { stamp(origin: savedOrigin, variant: savedVariant) }
        apply(&self)
    }

    /// Sets what the values set through these values are stamped with, on a node of their own.
    private mutating func stamp(origin: EntryOrigin?, variant: UInt32) {
        if !node.isUnique() { node = node.copy() }
        node.stamp(origin: origin, variant: variant)
    }
}
