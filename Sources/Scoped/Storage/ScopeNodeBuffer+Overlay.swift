extension ScopeNodeBuffer {
    /// One entry of the table; a `nil` box marks an empty slot.
    @usableFromInline
    struct Slot: Sendable {
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

    /// The entries a node sets: one stored property, one run-time access per operation.
    @usableFromInline
    struct Overlay {
        /// The slots: a power of two of them, or none until the node's first entry.
        @usableFromInline var table: [Slot]
        /// How many slots hold an entry.
        @usableFromInline var count = 0
    }
}

// MARK: - A table and its probing

extension ScopeNodeBuffer {
    /// A table of `capacity` empty slots.
    ///
    /// Four slots (a node's first table) are an array literal, which the compiler allocates
    /// directly: `Array(repeating:count:)` calls the standard library's unspecialized buffer
    /// initializer, which looks up the array storage's generic metadata at run time.
    static func emptyTable(capacity: Int) -> [Slot] {
        if capacity == 4 { return [.empty, .empty, .empty, .empty] }
        return Array(repeating: .empty, count: capacity)
    }

    /// The smallest table capacity that keeps `count` entries at most half full.
    static func capacity(for count: Int) -> Int {
        var capacity = 4
        while capacity < count * 2 { capacity <<= 1 }
        return capacity
    }

    /// The slot where a probe for `identity` starts, in a table of `mask + 1` slots.
    @inlinable
    static func start(_ identity: UInt, mask: Int) -> Int {
        // Fibonacci hashing of the identity, whose low bits are always zero.
        Int(truncatingIfNeeded: (identity &* 0x9E37_79B9_7F4A_7C15) &>> 40) & mask
    }

    /// The index of the slot of `table` holding `identity`, or of the empty slot where it would go.
    ///
    /// The table is at most half full, so the probe ends.
    @inlinable
    static func slotIndex(_ identity: UInt, in table: [Slot]) -> Int {
        let mask = table.count &- 1
        var index = start(identity, mask: mask)
        while true {
            let slotIdentity = table[index].identity
            if slotIdentity == identity || slotIdentity == 0 { return index }
            index = (index &+ 1) & mask
        }
    }

    /// The index of the slot of `table` holding `identity`, or `nil` if none does.
    @inlinable
    static func index(of identity: UInt, in table: [Slot]) -> Int? {
        if table.isEmpty { return nil }
        let index = slotIndex(identity, in: table)
        return table[index].identity == identity ? index : nil
    }
}
