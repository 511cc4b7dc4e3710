extension ScopedValues {
    /// Applies changes chosen by configuration; diagnostics show their origin as
    /// ``EntryOrigin/configuration``.
    package mutating func configure(_ body: (inout ScopedValues) throws -> Void) rethrows {
        let saved = stamp
        stamp = .configuration
        defer { stamp = saved }
        try body(&self)
    }

    /// Sets `entry` to its variant named `variant`, registered on the application root.
    ///
    /// - Throws: ``ScopedError/unknownVariant(entry:variant:known:)`` naming the variants that
    ///   exist, when the root registered no such variant.
    public mutating func selectVariant(_ variant: String, of entry: String) throws {
        let variants = scope?.registry.variants ?? ScopedVariants()
        guard let apply = variants.variant(variant, of: entry) else {
            throw ScopedError.unknownVariant(entry: entry, variant: variant, known: variants.names(of: entry))
        }
        let saved = self.variant
        self.variant = variant
        defer { self.variant = saved }
        apply(&self)
    }
}
