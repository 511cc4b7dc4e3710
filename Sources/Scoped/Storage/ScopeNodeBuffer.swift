/// The storage of a ``ScopeNode``: what the scope is, and its overlay's open-addressing table.
///
/// Each operation reads or changes `table` and `count` in one access: a stored `var` of a class
/// is checked for exclusive access at run time on every access (`swift_beginAccess`, a
/// thread-local lookup), which cost a fifth of a `withScopedValues` with two overrides when each
/// probe and slot read was an access of its own (BENCHMARKS.md, session 29). Inside one access,
/// the table is an `inout` array or a local copy, checked at compile time.
///
/// `@unchecked Sendable`: `table`, `count` and `stamp` change only through ``ScopeNode``'s
/// mutating methods, which check (`precondition`) that the buffer is uniquely referenced, or
/// on a copy not yet returned, so that no task that can see it is reading; once shared it never
/// changes, and neither does its base.
@usableFromInline
package final class ScopeNodeBuffer: @unchecked Sendable {
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

    @usableFromInline let depth: Int
    @usableFromInline let scope: ScopeContext?
    @usableFromInline let observer: DefaultReadObserver?
    /// The node whose entries this one sees through; `nil` for a base.
    @usableFromInline let base: ScopeNodeBuffer?
    /// The overlay's slots: a power of two of them, or none until the node's first entry.
    @usableFromInline var table: [Slot]
    /// How many slots hold an entry.
    @usableFromInline var count = 0
    /// What values set into this node are stamped with while a variant is applied; `nil`
    /// otherwise, so that a node pays one word for it.
    @usableFromInline var stamp: Stamp?

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

    private init(
        capacity: Int,
        depth: Int,
        scope: ScopeContext?,
        observer: DefaultReadObserver?,
        base: ScopeNodeBuffer?
    ) {
        precondition(capacity == 0 || capacity & (capacity - 1) == 0, "a table's capacity is a power of two")
        precondition(base?.base == nil, "a node sees through one base, which sees through none")
        self.depth = depth
        self.scope = scope
        self.observer = observer
        self.base = base
        self.table = Array(repeating: .empty, count: capacity)
    }

    package static func make(
        capacity: Int,
        depth: Int,
        scope: ScopeContext?,
        observer: DefaultReadObserver? = nil,
        base: ScopeNodeBuffer? = nil
    ) -> ScopeNodeBuffer {
        ScopeNodeBuffer(
            capacity: capacity,
            depth: depth,
            scope: scope,
            observer: observer ?? scope?.registry.observer,
            base: base
        )
    }

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

    /// The box of the value stored for `key`, or `nil` if no scope set it: the overlay's, else
    /// the base's.
    @inlinable
    package func storage(for key: ObjectIdentifier) -> AnyValueBox? {
        let identity = UInt(bitPattern: key)
        if let found = find(identity) { return found }
        return base?.find(identity)
    }

    /// The box stored for `identity` in this node's own table, or `nil`.
    @inlinable
    func find(_ identity: UInt) -> AnyValueBox? {
        // One access to `table`; a table allocated but holding nothing ends at its first slot.
        let table = self.table
        if table.isEmpty { return nil }
        let slot = table[Self.slotIndex(identity, in: table)]
        return slot.identity == identity ? slot.box : nil
    }

    /// The value of type `V` a box holds.
    ///
    /// A checked cast: only `ScopedValues`' setters store under a key, always a value of the
    /// type the key declares.
    @inlinable
    package static func load<V: Sendable>(_ box: AnyValueBox, as type: V.Type) -> V {
        (box as! ValueBox<V>).value
    }

    /// Stores `box` for `key`, replacing what was there, growing the table first when it has
    /// no room for one more.
    @usableFromInline
    func set(_ box: AnyValueBox, for key: Any.Type, info: EntryInfo) {
        let slot = Slot(identity: UInt(bitPattern: ObjectIdentifier(key)), box: box, keyType: key, info: info)
        Self.insert(slot, into: &table, count: &count, replacing: true)
    }

    /// Puts `slot` in `table`, which holds `count` entries, growing it first when it has no
    /// room for one more; an entry already there for its key is kept unless `replacing`.
    private static func insert(_ slot: Slot, into table: inout [Slot], count: inout Int, replacing: Bool) {
        if (count &+ 1) &* 2 > table.count {
            // Into a table twice as large (four slots for a node's first entry).
            let old = table
            table = Array(repeating: .empty, count: capacity(for: count + 1))
            count = 0
            insert(contentsOf: old, into: &table, count: &count, replacing: true)
        }
        let index = slotIndex(slot.identity, in: table)
        if table[index].box == nil {
            count += 1
        } else if !replacing {
            return
        }
        table[index] = slot
    }

    /// Overlays larger than this are flattened into a new base when a child scope opens, so
    /// that opening a child never copies more than this many entries of its parent's.
    @usableFromInline
    static let flattenThreshold = 16

    /// The smallest table capacity that keeps `count` entries at most half full.
    static func capacity(for count: Int) -> Int {
        var capacity = 4
        while capacity < count * 2 { capacity <<= 1 }
        return capacity
    }

    /// A node at `depth`, in `scope`, over `base`, whose overlay is a copy of this node's with
    /// room for one more entry.
    @usableFromInline
    package func copy(depth: Int, scope: ScopeContext?, base: ScopeNodeBuffer?) -> ScopeNodeBuffer {
        let copy = Self.make(
            capacity: Self.capacity(for: count + 1),
            depth: depth,
            scope: scope,
            observer: observer,
            base: base
        )
        copy.insertCopies(of: self, replacing: true)
        return copy
    }

    /// A base node at `depth`, in `scope`, holding every entry this node sees (its base's, then
    /// its overlay's over them), with room for one more.
    @usableFromInline
    package func flattened(depth: Int, scope: ScopeContext?) -> ScopeNodeBuffer {
        guard let base else { return copy(depth: depth, scope: scope, base: nil) }
        let copy = Self.make(
            capacity: Self.capacity(for: base.count + count + 1),
            depth: depth,
            scope: scope,
            observer: observer
        )
        copy.insertCopies(of: self, replacing: true)
        copy.insertCopies(of: base, replacing: false)
        return copy
    }

    /// The node of a child scope: over this node if it is a base, else over its base with a
    /// copy of its overlay, or flattened when that overlay has grown past
    /// ``flattenThreshold``.
    ///
    /// A child of a base gets its table with its first entry: a scope that sets nothing
    /// allocates none.
    @usableFromInline
    package func child(scope: ScopeContext?) -> ScopeNodeBuffer {
        let depth = self.depth + 1
        guard let base else {
            // A base with no entries (the empty root of everything) has nothing to see through.
            let seen = count == 0 && observer == nil ? nil : self
            return Self.make(
                capacity: 0,
                depth: depth,
                scope: scope,
                observer: observer,
                base: seen
            )
        }
        if count > Self.flattenThreshold { return flattened(depth: depth, scope: scope) }
        return copy(depth: depth, scope: scope, base: base)
    }

    /// Copies every entry of `source`'s table into this one, which must have room.
    ///
    /// An entry already here is kept unless `replacing`. Values are shared, not copied: boxes
    /// never change.
    private func insertCopies(of source: ScopeNodeBuffer, replacing: Bool) {
        let slots = source.table
        precondition((count + source.count) * 2 <= table.count, "a node's table stays at most half full")
        Self.insert(contentsOf: slots, into: &table, count: &count, replacing: replacing)
    }

    /// Puts every entry of `slots` in `table`, which must have room for them.
    private static func insert(contentsOf slots: [Slot], into table: inout [Slot], count: inout Int, replacing: Bool) {
        for slot in slots where slot.box != nil {
            insert(slot, into: &table, count: &count, replacing: replacing)
        }
    }
}
