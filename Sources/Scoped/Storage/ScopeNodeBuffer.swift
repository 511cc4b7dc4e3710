/// The storage of a ``ScopeNode``: what the scope is, and its overlay's open-addressing table.
///
/// Its one stored `var`, ``overlay``, holds the table and its count, and each
/// operation reads or changes it in one access: a stored `var` of a class is checked for
/// exclusive access at run time on every access (`swift_beginAccess`, a thread-local lookup),
/// which cost a fifth of a `withScopedValues` with two overrides when each probe and slot read
/// was an access of its own. Inside one access, the overlay
/// is an `inout` value or a local copy, checked at compile time.
///
/// `@unchecked Sendable`: `overlay` changes only through ``ScopeNode``'s
/// mutating methods, which check (`precondition`) that the buffer is uniquely referenced, or
/// on a copy not yet returned, so that no task that can see it is reading; once shared it never
/// changes, and neither does its base.
@usableFromInline
final class ScopeNodeBuffer: @unchecked Sendable {
    @usableFromInline let depth: Int
    @usableFromInline let scope: ServiceOwner?
    @usableFromInline let observer: DefaultReadObserver?
    /// The node whose entries this one sees through; `nil` for a base.
    @usableFromInline let base: ScopeNodeBuffer?
    /// The scope's own node for a node derived from it (by `withScopedValues` in the scope, or a
    /// copy written to); for a scope's own node, the own node of the scope it was opened in.
    ///
    /// Derived and own nodes are told apart by their scope: a derived node's `up` is in the
    /// same scope. So a node leads to the node of every scope above it (``ownNode(of:)``), and
    /// a scope's owner need not hold its node: nodes refer to owners and older nodes only,
    /// never the other way, and no cycle has to be broken when a scope ends.
    @usableFromInline let up: ScopeNodeBuffer?
    /// The entries this node sets.
    @usableFromInline var overlay: Overlay

    /// How many slots of the overlay hold an entry.
    @usableFromInline var count: Int { overlay.count }

    private init(
        capacity: Int,
        depth: Int,
        scope: ServiceOwner?,
        observer: DefaultReadObserver?,
        base: ScopeNodeBuffer?,
        up: ScopeNodeBuffer?
    ) {
        precondition(capacity == 0 || capacity & (capacity - 1) == 0, "a table's capacity is a power of two")
        precondition(base?.base == nil, "a node sees through one base, which sees through none")
        self.depth = depth
        self.scope = scope
        self.observer = observer
        self.base = base
        self.up = up
        self.overlay = Overlay(table: Self.emptyTable(capacity: capacity))
    }

    static func make(
        capacity: Int,
        depth: Int,
        scope: ServiceOwner?,
        observer: DefaultReadObserver? = nil,
        base: ScopeNodeBuffer? = nil,
        up: ScopeNodeBuffer? = nil
    ) -> ScopeNodeBuffer {
        ScopeNodeBuffer(
            capacity: capacity,
            depth: depth,
            scope: scope,
            observer: observer ?? scope?.registry.observer,
            base: base,
            up: up
        )
    }

    /// The box of the value stored for `key`, or `nil` if no scope set it: the overlay's, else
    /// the base's.
    @inlinable
    func storage(for key: ObjectIdentifier) -> AnyValueBox? {
        let identity = UInt(bitPattern: key)
        if let found = find(identity) { return found }
        return base?.find(identity)
    }

    /// The box stored for `identity` in this node's own table, or `nil`.
    @inlinable
    func find(_ identity: UInt) -> AnyValueBox? {
        // One access to `overlay`; a table allocated but holding nothing ends at its first slot.
        let table = overlay.table
        guard let index = Self.index(of: identity, in: table) else { return nil }
        return table[index].box
    }

    /// The value of type `V` stored for `key`, the overlay's, else the base's; `fallback()` if
    /// no scope set one.
    ///
    /// The value is copied out of its box where the box lies in the table, so that a read
    /// retains the value and not its box. Returns `V` itself, not `V?`: generic code that is not
    /// specialized would look up `V?`'s metadata at run time on every read.
    @inlinable
    func value<V: Sendable>(for key: ObjectIdentifier, as type: V.Type, otherwise fallback: () -> V) -> V {
        let identity = UInt(bitPattern: key)
        do {
            let table = overlay.table
            if let index = Self.index(of: identity, in: table) { return Self.load(table[index].box!, as: V.self) }
        }
        if let base {
            let table = base.overlay.table
            if let index = Self.index(of: identity, in: table) { return Self.load(table[index].box!, as: V.self) }
        }
        return fallback()
    }

    /// The value of type `V` a box holds.
    ///
    /// A checked cast: only `ScopedValues`' setters store under a key, always a value of the
    /// type the key declares.
    @inlinable
    static func load<V: Sendable>(_ box: AnyValueBox, as type: V.Type) -> V {
        (box as! ValueBox<V>).value
    }

    /// Stores `box` for `key`, replacing what was there, growing the table first when it has
    /// no room for one more; marked with `kind`, `lifetime` and this node's depth.
    @usableFromInline
    func set(_ box: consuming AnyValueBox, for key: Any.Type, kind: ScopedValues.EntryKind, lifetime: ScopedLifetime?) {
        Self.set(box, for: key, kind: kind, lifetime: lifetime, depth: depth, in: &overlay)
    }

    private static func set(
        _ box: consuming AnyValueBox,
        for key: Any.Type,
        kind: ScopedValues.EntryKind,
        lifetime: ScopedLifetime?,
        depth: Int,
        in overlay: inout Overlay
    ) {
        // `box` and `slot` are consumed: the box moves into its slot with no retain and release.
        let info = EntryInfo(kind: kind, lifetime: lifetime, depth: depth)
        let slot = Slot(identity: UInt(bitPattern: ObjectIdentifier(key)), box: box, keyType: key, info: info)
        insert(slot, into: &overlay, replacing: true)
    }

    /// Puts `slot` in `overlay`'s table, growing it first when it has no room for one more; an
    /// entry already there for its key is kept unless `replacing`.
    private static func insert(_ slot: consuming Slot, into overlay: inout Overlay, replacing: Bool) {
        if (overlay.count &+ 1) &* 2 > overlay.table.count {
            // Into a table twice as large (four slots for a node's first entry).
            let old = overlay.table
            overlay.table = emptyTable(capacity: capacity(for: overlay.count + 1))
            overlay.count = 0
            insert(contentsOf: old, into: &overlay, replacing: true)
        }
        let index = slotIndex(slot.identity, in: overlay.table)
        if overlay.table[index].box == nil {
            overlay.count += 1
        } else if !replacing {
            return
        }
        overlay.table[index] = slot
    }

    /// Overlays larger than this are flattened into a new base when a child scope opens, so
    /// that opening a child never copies more than this many entries of its parent's.
    @usableFromInline
    static let flattenThreshold = 16

    /// A node at `depth`, in `scope`, over `base`, whose overlay is a copy of this node's with
    /// room for one more entry, and `up` as its ``up``.
    @usableFromInline
    func copy(depth: Int, scope: ServiceOwner?, base: ScopeNodeBuffer?, up: ScopeNodeBuffer?) -> ScopeNodeBuffer {
        let copy = Self.make(
            capacity: Self.capacity(for: count + 1),
            depth: depth,
            scope: scope,
            observer: observer,
            base: base,
            up: up
        )
        copy.insertCopies(of: self, replacing: true)
        return copy
    }

    /// A base node at `depth`, in `scope`, holding every entry this node sees (its overlay's over
    /// its base's) and room for one more; `observer` answers its unset reads, `up` is its ``up``.
    @usableFromInline
    func flattened(
        depth: Int,
        scope: ServiceOwner?,
        up: ScopeNodeBuffer?,
        observer: DefaultReadObserver?
    ) -> ScopeNodeBuffer {
        let copy = Self.make(
            capacity: Self.capacity(for: (base?.count ?? 0) + count + 1),
            depth: depth,
            scope: scope,
            observer: observer,
            up: up
        )
        copy.insertCopies(of: self, replacing: true)
        if let base { copy.insertCopies(of: base, replacing: false) }
        return copy
    }

    /// The node of a child scope: over this node if it is a base, else over its base with a
    /// copy of its overlay, or flattened when that overlay has grown past
    /// ``flattenThreshold``.
    ///
    /// A child of a base gets its table with its first entry: a scope that sets nothing
    /// allocates none.
    @usableFromInline
    func child(scope: ServiceOwner?) -> ScopeNodeBuffer {
        let depth = self.depth + 1
        guard let base else {
            // A base with no entries (the empty root of everything) has nothing to see through.
            let seen = count == 0 && observer == nil ? nil : self
            return Self.make(
                capacity: 0,
                depth: depth,
                scope: scope,
                observer: observer,
                base: seen,
                up: ownNode
            )
        }
        if count > Self.flattenThreshold {
            return flattened(depth: depth, scope: scope, up: ownNode, observer: observer)
        }
        return copy(depth: depth, scope: scope, base: base, up: ownNode)
    }

    /// Copies every entry of `source`'s table into this one, which must have room.
    ///
    /// An entry already here is kept unless `replacing`. Values are shared, not copied: boxes
    /// never change.
    private func insertCopies(of source: ScopeNodeBuffer, replacing: Bool) {
        let source = source.overlay
        Self.insert(contentsOf: source.table, into: &overlay, replacing: replacing, adding: source.count)
    }

    /// Puts every entry of `slots` in `overlay`'s table, which must have room for `adding` more.
    private static func insert(
        contentsOf slots: [Slot],
        into overlay: inout Overlay,
        replacing: Bool,
        adding: Int? = nil
    ) {
        if let adding {
            precondition((overlay.count + adding) * 2 <= overlay.table.count, "a node's table stays at most half full")
        }
        for slot in slots where slot.box != nil {
            insert(slot, into: &overlay, replacing: replacing)
        }
    }
}
