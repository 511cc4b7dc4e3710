extension ScopeNodeBuffer {
    /// One entry of the table; a `nil` box marks an empty slot.
    @usableFromInline
    package struct Slot: Sendable {
        /// The key's identity as a number, for hashing and comparing.
        @usableFromInline var identity: UInt
        /// The value.
        @usableFromInline var box: AnyValueBox?
        /// The key type (or, for objects, the object's type), for diagnostics.
        @usableFromInline var keyType: Any.Type
        /// What diagnostics know of the entry.
        @usableFromInline var info: EntryInfo

        @usableFromInline
        static var empty: Slot { Slot(identity: 0, box: nil, keyType: Never.self, info: .none) }
    }

    /// The entries a node sets, and what it stamps them with: one stored property, one
    /// run-time access per operation.
    @usableFromInline
    struct Overlay {
        /// The slots: a power of two of them, or none until the node's first entry.
        @usableFromInline var table: [Slot]
        /// How many slots hold an entry.
        @usableFromInline var count = 0
        /// What values set into this node are stamped with while a variant is applied; `nil`
        /// otherwise, so that a node pays one word for it.
        @usableFromInline var stamp: Stamp?
    }

    /// See ``ScopeNode/stampedOrigin`` and ``ScopeNode/stampedVariant``.
    @usableFromInline
    final class Stamp: Sendable {
        @usableFromInline let origin: EntryOrigin?
        @usableFromInline let variant: UInt32

        init(origin: EntryOrigin?, variant: UInt32) {
            self.origin = origin
            self.variant = variant
        }
    }
}
