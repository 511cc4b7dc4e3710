/// The immutable state of one scope: every entry set by it and its ancestors, flattened into
/// one open-addressing hash table, with the scope's depth and the lifetime scope it belongs to.
///
/// The table is keyed by the identity of a key type (or of an object's type). Opening a scope
/// copies its parent's node once, so a lookup costs one hash and, almost always, one probe,
/// however deep scopes nest and however many entries are set. Header and slots share one
/// allocation.
///
/// `@unchecked Sendable`: a node is mutated only through ``ScopedValues``' copy-on-write, while
/// its buffer is uniquely referenced, before it is bound to a task-local; once shared it never
/// changes. (`ManagedBuffer` itself cannot be `Sendable`, hence this wrapper.)
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

    package var count: Int { buffer.count }
    @inlinable
    package var depth: Int { buffer.depth }
    @inlinable
    package var scope: ScopeContext? { buffer.scope }
    @inlinable
    package var testObserver: TestScopeObserver? { buffer.testObserver }
    @inlinable
    package var hasRoomForOneMore: Bool { buffer.hasRoomForOneMore }
    package var boxes: [AnyValueBox] { buffer.boxes }

    @inlinable
    package func box(for key: ObjectIdentifier) -> AnyValueBox? { buffer.box(for: key) }

    /// A copy with room for `extra` more entries, at `depth`, in `scope`.
    @inlinable
    package func copy(extra: Int, depth: Int, scope: ScopeContext?) -> ScopeNode {
        ScopeNode(buffer.copy(extra: extra, depth: depth, scope: scope))
    }

    /// Whether this is the only reference to the buffer, so it may be written in place.
    @inlinable
    package mutating func isUnique() -> Bool { isKnownUniquelyReferenced(&buffer) }

    /// Stores `box` for `key`; the buffer must be unique and have room.
    @inlinable
    package func set(_ box: AnyValueBox, for key: ObjectIdentifier) { buffer.set(box, for: key) }
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
        @usableFromInline var testObserver: TestScopeObserver?
    }

    @usableFromInline
    package struct Slot {
        /// The key's identity as a number; 0 marks an empty slot.
        @usableFromInline var key: UInt
        @usableFromInline var box: AnyValueBox?
    }

    package static func make(capacity: Int, depth: Int, scope: ScopeContext?) -> ScopeNodeBuffer {
        let buffer = create(minimumCapacity: capacity) { _ in
            Header(count: 0, capacity: capacity, depth: depth, scope: scope, testObserver: scope?.registry.testObserver)
        }
        let node = unsafeDowncast(buffer, to: ScopeNodeBuffer.self)
        node.withUnsafeMutablePointerToElements { $0.initialize(repeating: Slot(key: 0, box: nil), count: capacity) }
        return node
    }

    deinit {
        withUnsafeMutablePointers { header, slots in _ = slots.deinitialize(count: header.pointee.capacity) }
    }

    package var count: Int { withUnsafeMutablePointerToHeader { $0.pointee.count } }
    @inlinable
    package var depth: Int { withUnsafeMutablePointerToHeader { $0.pointee.depth } }
    @inlinable
    package var scope: ScopeContext? { withUnsafeMutablePointerToHeader { $0.pointee.scope } }
    @inlinable
    package var testObserver: TestScopeObserver? { withUnsafeMutablePointerToHeader { $0.pointee.testObserver } }

    @inlinable
    static func start(_ identity: UInt, mask: Int) -> Int {
        // Fibonacci hashing of the pointer, whose low bits are always zero.
        Int(truncatingIfNeeded: (identity &* 0x9E37_79B9_7F4A_7C15) &>> 40) & mask
    }

    /// The box stored for `key`, or `nil` if no scope set it.
    ///
    /// `@inlinable`, with the rest of the read path: the benchmark's read of an entry drops from
    /// about 65 ns to about 30 ns when clients can specialize it.
    @inlinable
    package func box(for key: ObjectIdentifier) -> AnyValueBox? {
        withUnsafeMutablePointers { header, slots in
            if header.pointee.count == 0 { return nil }
            let identity = UInt(bitPattern: key)
            let mask = header.pointee.capacity &- 1
            var index = Self.start(identity, mask: mask)
            while true {
                let slotKey = slots[index].key
                if slotKey == identity { return slots[index].box }
                if slotKey == 0 { return nil }
                index = (index &+ 1) & mask
            }
        }
    }

    /// Whether one more entry fits without passing half the capacity.
    @inlinable
    package var hasRoomForOneMore: Bool {
        withUnsafeMutablePointerToHeader { ($0.pointee.count &+ 1) &* 2 <= $0.pointee.capacity }
    }

    /// A copy with room for `extra` more entries, at `depth`, in `scope`.
    @usableFromInline
    package func copy(extra: Int, depth: Int, scope: ScopeContext?) -> ScopeNodeBuffer {
        let needed = (count + extra) * 2
        var capacity = 8
        while capacity < needed { capacity <<= 1 }
        let copy = Self.make(capacity: capacity, depth: depth, scope: scope)
        withUnsafeMutablePointers { header, slots in
            for index in 0..<header.pointee.capacity where slots[index].key != 0 {
                copy.insert(slots[index].box!, identity: slots[index].key)
            }
        }
        return copy
    }

    /// Stores `box` for `key`, replacing what was there. The node must be uniquely referenced
    /// and have room (``hasRoomForOneMore``).
    @usableFromInline
    package func set(_ box: AnyValueBox, for key: ObjectIdentifier) {
        insert(box, identity: UInt(bitPattern: key))
    }

    private func insert(_ box: AnyValueBox, identity: UInt) {
        withUnsafeMutablePointers { header, slots in
            let mask = header.pointee.capacity &- 1
            var index = Self.start(identity, mask: mask)
            while slots[index].key != 0 && slots[index].key != identity {
                index = (index &+ 1) & mask
            }
            if slots[index].key == 0 { header.pointee.count &+= 1 }
            slots[index] = Slot(key: identity, box: box)
        }
    }

    /// Every stored box, in no particular order.
    package var boxes: [AnyValueBox] {
        withUnsafeMutablePointers { header, slots in
            (0..<header.pointee.capacity).compactMap { slots[$0].box }
        }
    }
}
