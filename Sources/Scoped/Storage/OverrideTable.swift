/// The entries a scope has set, flattened with everything its ancestors set.
///
/// An open-addressing hash table keyed by the identity of a key type (or of an object's type).
/// Opening a scope copies its parent's table once, so a lookup costs one hash and, almost
/// always, one probe, however deep the scopes nest and however many entries are set.
/// The table is a value: copies share storage until one of them is written to.
package struct OverrideTable: Sendable {
    private struct Slot: Sendable {
        /// The key's identity as a number; 0 marks an empty slot.
        var key: UInt
        var box: AnyValueBox?
    }

    private var slots: ContiguousArray<Slot> = []
    /// The number of entries in the table.
    package private(set) var count = 0

    package init() {}

    @inline(__always)
    private static func identity(_ key: ObjectIdentifier) -> UInt { UInt(bitPattern: key) }

    @inline(__always)
    private static func start(_ identity: UInt, mask: Int) -> Int {
        // Fibonacci hashing of the pointer; its low bits are always zero.
        Int(truncatingIfNeeded: (identity &* 0x9E37_79B9_7F4A_7C15) &>> 40) & mask
    }

    /// The box stored for `key`, or `nil` if no scope set it.
    @inline(__always)
    package func box(for key: ObjectIdentifier) -> AnyValueBox? {
        if count == 0 { return nil }
        let identity = Self.identity(key)
        return slots.withUnsafeBufferPointer { slots in
            let mask = slots.count &- 1
            var index = Self.start(identity, mask: mask)
            while true {
                let slotKey = slots[index].key
                if slotKey == identity { return slots[index].box }
                if slotKey == 0 { return nil }
                index = (index &+ 1) & mask
            }
        }
    }

    /// Stores `box` for `key`, replacing what was there.
    package mutating func set(_ box: AnyValueBox, for key: ObjectIdentifier) {
        if (count &+ 1) &* 2 > slots.count { grow() }
        let identity = Self.identity(key)
        let mask = slots.count &- 1
        var index = Self.start(identity, mask: mask)
        while slots[index].key != 0 && slots[index].key != identity {
            index = (index &+ 1) & mask
        }
        if slots[index].key == 0 { count &+= 1 }
        slots[index] = Slot(key: identity, box: box)
    }

    private mutating func grow() {
        let old = slots
        slots = ContiguousArray(repeating: Slot(key: 0, box: nil), count: Swift.max(8, old.count * 2))
        count = 0
        for slot in old where slot.key != 0 {
            set(slot.box!, for: unsafeBitCast(slot.key, to: ObjectIdentifier.self))
        }
    }

    /// Every stored box, in no particular order.
    package var boxes: [AnyValueBox] { slots.compactMap(\.box) }
}
