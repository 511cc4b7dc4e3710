extension ScopeNodeBuffer {
    /// What diagnostics know of every entry this node sees, in no particular order: the
    /// overlay's, and the base's that the overlay does not replace.
    var entries: [StoredEntry] {
        let own = overlay.table.compactMap { slot -> StoredEntry? in
            guard let box = slot.box else { return nil }
            return StoredEntry(
                keyType: slot.keyType,
                valueType: box.valueType,
                kind: slot.info.kind,
                lifetime: slot.info.lifetime,
                origin: slot.info.origin,
                variant: VariantNames.name(at: slot.info.variant)
            )
        }
        guard let base else { return own }
        let keys = Set(own.map { ObjectIdentifier($0.keyType) })
        return own + base.entries.filter { !keys.contains(ObjectIdentifier($0.keyType)) }
    }
}
