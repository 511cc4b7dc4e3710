/// The immutable state of one scope: the entries it sets, a link to the *base* node whose
/// entries it sees through, its depth, and the lifetime scope it belongs to.
///
/// Why an overlay on a base, and not one flattened table: a request scope opened on an
/// application root that holds dozens of entries must not copy them. So a node holds an
/// open-addressing hash table of *its overlay* (the entries set below its base, its own
/// included) and refers to its base, a node whose table holds everything up to it. A read
/// probes the overlay, then the base: at most two probes, however deep scopes nest and however
/// many entries are set. Opening a child of a base (a root's request scope, a
/// `withScopedValues` at the top of a task) starts an empty overlay: the cost is the entries
/// the child sets. Opening a child of an overlay copies that overlay (the few entries set
/// between the base and here), never the base.
///
/// Worst case: deeply nested scopes that each set entries grow the overlay; once it passes
/// ``ScopeNodeBuffer/flattenThreshold`` entries, the next child is flattened into a new base
/// (one copy of everything, base included), so an overlay copy stays bounded and the chain
/// never grows past two tables. Header and overlay slots share one allocation.
///
/// `@unchecked Sendable`: a node is mutated only through ``ScopedValues``' copy-on-write, while
/// its buffer is uniquely referenced, before it is bound to a task-local; once shared it never
/// changes, and neither does its base. (`ManagedBuffer` itself cannot be `Sendable`.)
@usableFromInline
package struct ScopeNode: @unchecked Sendable {
    @usableFromInline
    package var buffer: ScopeNodeBuffer

    @inlinable
    package init(_ buffer: ScopeNodeBuffer) {
        self.buffer = buffer
    }

    /// The node of the root of everything: no entries, depth 0, no scope.
    @usableFromInline
    package static let empty = ScopeNode(.make(capacity: 0, depth: 0, scope: nil))

    @inlinable
    package var depth: Int { buffer.depth }
    @inlinable
    package var scope: ScopeContext? { buffer.scope }
    @inlinable
    package var observer: DefaultReadObserver? { buffer.observer }
    @inlinable
    package var hasRoomForOneMore: Bool { buffer.hasRoomForOneMore }
    package var entries: [StoredEntry] { buffer.entries }

    /// The origin stamped on values set into this node while a variant is applied, when not
    /// the one its depth implies; `nil` otherwise.
    @inlinable
    package var stampedOrigin: EntryOrigin? { buffer.withUnsafeMutablePointerToHeader { $0.pointee.stampedOrigin } }
    /// The ``VariantNames`` index of the variant being applied to this node, stamped on the
    /// values set into it meanwhile; 0 otherwise.
    @inlinable
    package var stampedVariant: UInt32 { buffer.withUnsafeMutablePointerToHeader { $0.pointee.stampedVariant } }

    /// Sets what values set into this node are stamped with; the buffer must be unique.
    @inlinable
    package func stamp(origin: EntryOrigin?, variant: UInt32) {
        buffer.withUnsafeMutablePointerToHeader {
            $0.pointee.stampedOrigin = origin
            $0.pointee.stampedVariant = variant
        }
    }

    /// Where the value stored for `key` lives, or `nil` if no scope set it.
    ///
    /// The pointer is valid while this node is; read it with ``ScopeNodeBuffer/load(_:as:)``.
    /// Without a type, so that unspecialized generic code can ask whether a value is there
    /// without instantiating `V?`'s metadata at run time, and a specialized read can copy the
    /// value once, straight to where it returns it.
    @inlinable
    package func storage(for key: ObjectIdentifier) -> UnsafeRawPointer? {
        buffer.storage(for: key)
    }

    /// A copy of this node, at the same level, with room for `extra` more entries: the same
    /// base and a copy of the overlay (for a base, of its whole table).
    ///
    /// The copy keeps stamping what a variant being applied sets: it replaces this node when
    /// one grows, or is first written, while a variant is applied.
    @inlinable
    package func copy(extra: Int) -> ScopeNode {
        let copy = ScopeNode(buffer.copy(extra: extra, depth: buffer.depth, scope: buffer.scope, base: buffer.baseNode))
        copy.stamp(origin: stampedOrigin, variant: stampedVariant)
        return copy
    }

    /// A base node at `depth`, in `scope`, holding every entry this node sees, with room for
    /// `extra` more: what an application root starts from.
    @inlinable
    package func flattened(extra: Int, depth: Int, scope: ScopeContext?) -> ScopeNode {
        ScopeNode(buffer.flattened(extra: extra, depth: depth, scope: scope))
    }

    /// The node of a child scope, one level deeper, in `scope`, with room for `extra` entries.
    ///
    /// Costs the entries set since this node's base, never the base's.
    @inlinable
    package func child(extra: Int, scope: ScopeContext?) -> ScopeNode {
        ScopeNode(buffer.child(extra: extra, scope: scope))
    }

    /// Whether this is the only reference to the buffer, so it may be written in place.
    @inlinable
    package mutating func isUnique() -> Bool { isKnownUniquelyReferenced(&buffer) }

    /// Stores `value` for `key`, with what diagnostics know of it; the buffer must be unique and have room.
    @inlinable
    package func set<V: Sendable>(_ value: V, for key: ObjectIdentifier, info: EntryInfo) {
        buffer.set(value, for: key, info: info)
    }
}

/// The storage of a ``ScopeNode``: header and hash-table slots in one allocation.
@usableFromInline
package final class ScopeNodeBuffer: ManagedBuffer<ScopeNodeBuffer.Header, ScopeNodeBuffer.Slot> {
    @usableFromInline
    package struct Header {
        @usableFromInline var count: Int
        /// A power of two, or 0 for a node with no entries.
        @usableFromInline var capacity: Int
        @usableFromInline var depth: Int
        @usableFromInline var scope: ScopeContext?
        @usableFromInline var observer: DefaultReadObserver?
        /// The node whose entries this one sees through, retained; `nil` for a base.
        ///
        /// Kept unmanaged so that a read can follow it without a retain and a release.
        @usableFromInline var base: Unmanaged<ScopeNodeBuffer>?
        /// See ``ScopeNode/stampedOrigin``.
        @usableFromInline var stampedOrigin: EntryOrigin?
        /// See ``ScopeNode/stampedVariant``.
        @usableFromInline var stampedVariant: UInt32
    }

    /// One entry of the table.
    ///
    /// Its value lives in `storage` itself when it fits in five words (every class reference, most existentials,
    /// strings, small structs), or in a ``ValueBox`` whose reference lives there; `witness` knows how to copy and
    /// destroy it, and the value's type. The slot itself is plain words: it needs no destroying of its own, and
    /// making and copying one is a few stores.
    @usableFromInline
    package struct Slot {
        /// The value, or its box, as raw words.
        ///
        /// First, so that it starts at the slot's address.
        @usableFromInline var storage: (UInt, UInt, UInt, UInt, UInt)
        /// The key's identity as a number; 0 marks an empty slot.
        @usableFromInline var key: UInt
        @usableFromInline var witness: (any SlotValueWitness.Type)?
        /// What diagnostics know of the entry.
        @usableFromInline var info: EntryInfo

        static var empty: Slot { Slot(storage: (0, 0, 0, 0, 0), key: 0, witness: nil, info: .none) }
    }

    /// Where a slot's `storage` starts within the slot: at its start, as the first stored property of a non-resilient
    /// struct (checked when a node is made).
    ///
    /// A constant, because `MemoryLayout.offset(of:)` with a key path is not folded on the read path.
    @inlinable
    static var storageOffset: Int { 0 }

    /// Whether a value of type `V` is stored in a slot's words rather than boxed.
    @inlinable
    static func storesInline<V>(_ type: V.Type) -> Bool {
        MemoryLayout<V>.size <= MemoryLayout<(UInt, UInt, UInt, UInt, UInt)>.size
            && MemoryLayout<V>.alignment <= MemoryLayout<UInt>.alignment
    }

    package static func make(
        capacity: Int,
        depth: Int,
        scope: ScopeContext?,
        observer: DefaultReadObserver? = nil,
        base: ScopeNodeBuffer? = nil
    ) -> ScopeNodeBuffer {
        let buffer = create(minimumCapacity: capacity) { _ in
            Header(
                count: 0,
                capacity: capacity,
                depth: depth,
                scope: scope,
                observer: observer ?? scope?.registry.observer,
                base: base.map { Unmanaged.passRetained($0) },
                stampedOrigin: nil,
                stampedVariant: 0
            )
        }
        assert(MemoryLayout<Slot>.offset(of: \Slot.storage) == storageOffset)
        assert(_isPOD(Slot.self))
        let node = unsafeDowncast(buffer, to: ScopeNodeBuffer.self)
        node.withUnsafeMutablePointerToElements { $0.initialize(repeating: .empty, count: capacity) }
        return node
    }

    deinit {
        withUnsafeMutablePointers { header, slots in
            for index in 0..<header.pointee.capacity where slots[index].key != 0 {
                slots[index].witness!.destroy(UnsafeMutableRawPointer(slots + index) + Self.storageOffset)
            }
            // Slots are plain words (checked when a node is made): nothing else to deinitialize.
            header.pointee.base?.release()
        }
    }

    package var count: Int { withUnsafeMutablePointerToHeader { $0.pointee.count } }
    @inlinable
    package var depth: Int { withUnsafeMutablePointerToHeader { $0.pointee.depth } }
    @inlinable
    package var scope: ScopeContext? { withUnsafeMutablePointerToHeader { $0.pointee.scope } }
    @inlinable
    package var observer: DefaultReadObserver? { withUnsafeMutablePointerToHeader { $0.pointee.observer } }

    @inlinable
    static func start(_ identity: UInt, mask: Int) -> Int {
        // Fibonacci hashing of the pointer, whose low bits are always zero.
        Int(truncatingIfNeeded: (identity &* 0x9E37_79B9_7F4A_7C15) &>> 40) & mask
    }

    /// The index of the slot holding `identity`, or of the empty slot where it would go.
    @inlinable
    static func slotIndex(
        _ identity: UInt,
        header: UnsafeMutablePointer<Header>,
        slots: UnsafeMutablePointer<Slot>
    ) -> Int {
        let mask = header.pointee.capacity &- 1
        var index = Self.start(identity, mask: mask)
        while true {
            let slotKey = slots[index].key
            if slotKey == identity || slotKey == 0 { return index }
            index = (index &+ 1) & mask
        }
    }

    /// Where the value stored for `key` lives, or `nil` if no scope set it: the overlay's slot,
    /// else the base's.
    ///
    /// `@inlinable`, with the rest of the read path: the benchmark's read of an entry drops from
    /// about 65 ns to about 43 ns when clients can specialize it.
    @inlinable
    package func storage(for key: ObjectIdentifier) -> UnsafeRawPointer? {
        let identity = UInt(bitPattern: key)
        if let found = withUnsafeMutablePointers({ Self.find(identity, header: $0, slots: $1) }) { return found }
        guard let base = withUnsafeMutablePointerToHeader({ $0.pointee.base }) else { return nil }
        // The base outlives this node, which retains it, and so does the slot returned.
        return base._withUnsafeGuaranteedRef { base in
            base.withUnsafeMutablePointers { Self.find(identity, header: $0, slots: $1) }
        }
    }

    /// Where the value stored for `identity` in one table lives, or `nil`.
    @inlinable
    static func find(
        _ identity: UInt,
        header: UnsafeMutablePointer<Header>,
        slots: UnsafeMutablePointer<Slot>
    ) -> UnsafeRawPointer? {
        if header.pointee.count == 0 { return nil }
        let index = slotIndex(identity, header: header, slots: slots)
        guard slots[index].key == identity else { return nil }
        return UnsafeRawPointer(slots + index) + storageOffset
    }

    /// A copy of the value of type `V` a slot's `storage` holds, inline or boxed.
    @inlinable
    package static func load<V: Sendable>(_ storage: UnsafeRawPointer, as type: V.Type) -> V {
        if storesInline(V.self) { return storage.load(as: V.self) }
        return storage.load(as: ValueBox<V>.self).value
    }

    /// Stores `value` for `key`, replacing what was there.
    ///
    /// The node must be uniquely referenced and have room (``hasRoomForOneMore``).
    @inlinable
    package func set<V: Sendable>(_ value: V, for key: ObjectIdentifier, info: EntryInfo) {
        withUnsafeMutablePointers { header, slots in
            let identity = UInt(bitPattern: key)
            let index = Self.slotIndex(identity, header: header, slots: slots)
            let storage = UnsafeMutableRawPointer(slots + index) + Self.storageOffset
            if slots[index].key == identity {
                slots[index].witness!.destroy(storage)
            } else {
                slots[index].key = identity
                header.pointee.count &+= 1
            }
            if Self.storesInline(V.self) {
                storage.initializeMemory(as: V.self, to: value)
                slots[index].witness = SlotWitness<V>.self
            } else {
                storage.initializeMemory(as: ValueBox<V>.self, to: ValueBox(value))
                slots[index].witness = BoxedSlotWitness<V>.self
            }
            slots[index].info = info
        }
    }

    /// Whether one more entry fits without passing half the capacity.
    @inlinable
    package var hasRoomForOneMore: Bool {
        withUnsafeMutablePointerToHeader { ($0.pointee.count &+ 1) &* 2 <= $0.pointee.capacity }
    }

    /// Overlays larger than this are flattened into a new base when a child scope opens, so
    /// that opening a child never copies more than this many entries of its parent's.
    @usableFromInline
    static let flattenThreshold = 16

    /// The base this node sees through, retained by the caller; `nil` for a base.
    @usableFromInline
    var baseNode: ScopeNodeBuffer? {
        withUnsafeMutablePointerToHeader { $0.pointee.base?.takeUnretainedValue() }
    }

    /// The smallest table capacity that keeps `count` entries at most half full.
    static func capacity(for count: Int) -> Int {
        var capacity = 4
        while capacity < count * 2 { capacity <<= 1 }
        return capacity
    }

    /// A node at `depth`, in `scope`, over `base`, whose overlay is a copy of this node's with
    /// room for `extra` more entries.
    @usableFromInline
    package func copy(extra: Int, depth: Int, scope: ScopeContext?, base: ScopeNodeBuffer?) -> ScopeNodeBuffer {
        let copy = Self.make(
            capacity: Self.capacity(for: count + extra),
            depth: depth,
            scope: scope,
            observer: observer,
            base: base
        )
        copy.insertCopies(of: self, replacing: true)
        return copy
    }

    /// A base node at `depth`, in `scope`, holding every entry this node sees (its base's, then
    /// its overlay's over them), with room for `extra` more.
    @usableFromInline
    package func flattened(extra: Int, depth: Int, scope: ScopeContext?) -> ScopeNodeBuffer {
        guard let base = baseNode else { return copy(extra: extra, depth: depth, scope: scope, base: nil) }
        let copy = Self.make(
            capacity: Self.capacity(for: base.count + count + extra),
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
    @usableFromInline
    package func child(extra: Int, scope: ScopeContext?) -> ScopeNodeBuffer {
        let depth = self.depth + 1
        guard let base = baseNode else {
            // A base with no entries (the empty root of everything) has nothing to see through.
            let seen = count == 0 && observer == nil ? nil : self
            return Self.make(
                capacity: Self.capacity(for: extra),
                depth: depth,
                scope: scope,
                observer: observer,
                base: seen
            )
        }
        if count > Self.flattenThreshold { return flattened(extra: extra, depth: depth, scope: scope) }
        return copy(extra: extra, depth: depth, scope: scope, base: base)
    }

    /// Copies every entry of `source`'s table into this one, which must have room; an entry
    /// already here is kept unless `replacing`.
    private func insertCopies(of source: ScopeNodeBuffer, replacing: Bool) {
        source.withUnsafeMutablePointers { header, slots in
            withUnsafeMutablePointers { copyHeader, copySlots in
                for index in 0..<header.pointee.capacity where slots[index].key != 0 {
                    let target = Self.slotIndex(slots[index].key, header: copyHeader, slots: copySlots)
                    let storage = UnsafeMutableRawPointer(copySlots + target) + Self.storageOffset
                    if copySlots[target].key != 0 {
                        guard replacing else { continue }
                        copySlots[target].witness!.destroy(storage)
                    } else {
                        copySlots[target].key = slots[index].key
                        copyHeader.pointee.count &+= 1
                    }
                    copySlots[target].witness = slots[index].witness
                    copySlots[target].info = slots[index].info
                    slots[index].witness!.copy(from: UnsafeRawPointer(slots + index) + Self.storageOffset, to: storage)
                }
            }
        }
    }

    /// What diagnostics know of every entry this node sees, in no particular order: the
    /// overlay's, and the base's that the overlay does not replace.
    package var entries: [StoredEntry] {
        let own = withUnsafeMutablePointers { header, slots in
            (0..<header.pointee.capacity)
                .compactMap { index -> StoredEntry? in
                    let slot = slots[index]
                    guard slot.key != 0, let witness = slot.witness else { return nil }
                    return StoredEntry(
                        // A key's identity is its type's metadata.
                        keyType: unsafeBitCast(UnsafeRawPointer(bitPattern: slot.key)!, to: Any.Type.self),
                        valueType: witness.valueType,
                        kind: slot.info.kind,
                        lifetime: slot.info.lifetime,
                        origin: slot.info.origin,
                        variant: VariantNames.name(at: slot.info.variant)
                    )
                }
        }
        guard let base = baseNode else { return own }
        let keys = Set(own.map { ObjectIdentifier($0.keyType) })
        return own + base.entries.filter { !keys.contains(ObjectIdentifier($0.keyType)) }
    }
}

/// How a slot's value is copied and destroyed, known only through its type, and what type it is.
@usableFromInline
protocol SlotValueWitness {
    /// The value's type, as its key declares it.
    static var valueType: Any.Type { get }
    static func copy(from source: UnsafeRawPointer, to destination: UnsafeMutableRawPointer)
    static func destroy(_ value: UnsafeMutableRawPointer)
}

/// The ``SlotValueWitness`` of values of type `Value` stored in a slot's words.
@usableFromInline
enum SlotWitness<Value>: SlotValueWitness {
    @usableFromInline
    static var valueType: Any.Type { Value.self }

    @usableFromInline
    static func copy(from source: UnsafeRawPointer, to destination: UnsafeMutableRawPointer) {
        destination.initializeMemory(as: Value.self, to: source.load(as: Value.self))
    }

    @usableFromInline
    static func destroy(_ value: UnsafeMutableRawPointer) {
        value.assumingMemoryBound(to: Value.self).deinitialize(count: 1)
    }
}

/// The ``SlotValueWitness`` of values of type `Value` stored in a ``ValueBox``.
@usableFromInline
enum BoxedSlotWitness<Value: Sendable>: SlotValueWitness {
    @usableFromInline
    static var valueType: Any.Type { Value.self }

    @usableFromInline
    static func copy(from source: UnsafeRawPointer, to destination: UnsafeMutableRawPointer) {
        destination.initializeMemory(as: ValueBox<Value>.self, to: source.load(as: ValueBox<Value>.self))
    }

    @usableFromInline
    static func destroy(_ value: UnsafeMutableRawPointer) {
        value.assumingMemoryBound(to: ValueBox<Value>.self).deinitialize(count: 1)
    }
}
