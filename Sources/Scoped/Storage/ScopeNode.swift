/// The state of one scope: the entries it sets, a link to the *base* node whose entries it sees
/// through, its depth, and the lifetime scope it belongs to.
///
/// Why an overlay on a base, and not one flattened table: a request scope opened on an
/// application root that holds dozens of entries must not copy them. So a node holds a hash
/// table of *its overlay* (the entries set below its base, its own included) and refers to its
/// base, a node whose table holds everything up to it. A read probes the overlay, then the
/// base: at most two probes, however deep scopes nest and however many entries are set.
/// Opening a child of a base (a root's request scope, a `withScopedValues` at the top of a
/// task) starts an empty overlay: the cost is the entries the child sets. Opening a child of an
/// overlay copies that overlay (the few entries set between the base and here), never the base.
///
/// Worst case: deeply nested scopes that each set entries grow the overlay; once it passes
/// ``ScopeNodeBuffer/flattenThreshold`` entries, the next child is flattened into a new base
/// (one copy of everything, base included), so an overlay copy stays bounded and the chain
/// never grows past two tables.
@usableFromInline
struct ScopeNode: Sendable {
    @usableFromInline
    var buffer: ScopeNodeBuffer

    @inlinable
    init(_ buffer: ScopeNodeBuffer) {
        self.buffer = buffer
    }

    /// The node of the root of everything: no entries, depth 0, no scope; its reads of entries
    /// no one set, and those of every node made from it outside a root, go to the observer
    /// ``ScopedValues/bootstrapReadsOutsideEveryRoot(with:)`` installed.
    @usableFromInline
    static let empty = ScopeNode(
        .make(capacity: 0, depth: 0, scope: nil, observer: DefaultReadObserver(readers: [ReadsOutsideEveryRoot()]))
    )

    @inlinable
    var depth: Int { buffer.depth }
    @inlinable
    var scope: ServiceOwner? { buffer.scope }
    @inlinable
    var observer: DefaultReadObserver? { buffer.observer }

    /// The box of the value stored for `key`, or `nil` if no scope set it.
    ///
    /// The overlay's, else the base's. Read it with ``ScopeNodeBuffer/load(_:as:)``. Without a
    /// type, so that unspecialized generic code can ask whether a value is there
    /// without instantiating `V?`'s metadata at run time.
    @inlinable
    func storage(for key: ObjectIdentifier) -> AnyValueBox? {
        buffer.storage(for: key)
    }

    /// The value of type `V` stored for `key`, or `fallback()` if no scope set one.
    ///
    /// See ``ScopeNodeBuffer/value(for:as:otherwise:)``.
    @inlinable
    func value<V: Sendable>(for key: ObjectIdentifier, as type: V.Type, otherwise fallback: () -> V) -> V {
        buffer.value(for: key, as: type, otherwise: fallback)
    }

    /// A copy of this node, at the same level, with room for one more entry: the same base and
    /// a copy of the overlay (for a base, of its whole table).
    @inlinable
    func copy() -> ScopeNode {
        ScopeNode(buffer.copy(depth: buffer.depth, scope: buffer.scope, base: buffer.base, up: buffer.ownNode))
    }

    /// A base node at `depth`, the own node of `scope`, holding every entry this node sees:
    /// what an application root and a tenant start from.
    ///
    /// Its reads of entries no one set go to `scope`'s root's observers, not to this node's.
    ///
    /// A tenant's leads up to this node's scope (on a test root, a tenant opened in a suite's
    /// scope is in it); a root's leads nowhere, so that a root made from another's values (a
    /// reload's) keeps nothing of it.
    func flattened(depth: Int, scope: ServiceOwner) -> ScopeNode {
        ScopeNode(
            buffer.flattened(
                depth: depth,
                scope: scope,
                up: scope.level == .app ? nil : buffer.ownNode,
                observer: scope.registry.observer
            )
        )
    }

    /// This node as the own node of its scope, just opened: itself, or, when the scope's values
    /// were copied while they were set (a copy kept by the closure that set them), a copy that
    /// takes the place of the node it was copied from.
    func asOwnNode() -> ScopeNode {
        let own = buffer.ownNode
        guard own !== buffer else { return self }
        return ScopeNode(buffer.copy(depth: depth, scope: scope, base: buffer.base, up: own.up))
    }

    /// The node of a child scope, one level deeper, in `scope`.
    ///
    /// Costs the entries set since this node's base, never the base's.
    @inlinable
    func child(scope: ServiceOwner?) -> ScopeNode {
        ScopeNode(buffer.child(scope: scope))
    }

    /// Whether this is the only reference to the buffer, so it may be written in place.
    @inlinable
    mutating func isUnique() -> Bool { isKnownUniquelyReferenced(&buffer) }

    /// Stores `value` for `key` as an entry of `kind` (with `lifetime`, for a service provided
    /// from outside), marked with this node's depth.
    ///
    /// - Precondition: the buffer is uniquely referenced.
    @inlinable
    mutating func set<V: Sendable>(
        _ value: V,
        for key: Any.Type,
        kind: ScopedValues.EntryKind,
        lifetime: ScopedLifetime?
    ) {
        precondition(isUnique(), "a scope's node changed after it was shared")
        buffer.set(ValueBox(value), for: key, kind: kind, lifetime: lifetime)
    }
}

/// How a node leads to the nodes of the scopes above it.
extension ScopeNodeBuffer {
    /// The own node of this node's scope: this node, unless it is derived from that one.
    @usableFromInline
    var ownNode: ScopeNodeBuffer {
        if let up, up.scope === scope { return up }
        return self
    }

    /// The own node of `owner`, a scope this node is in or below: the node its services are
    /// built and closed with.
    ///
    /// - Precondition: `owner` is this node's scope or one above it, as the owner a read of
    ///   these values finds (``ServiceOwner/owner(at:)``) always is.
    @usableFromInline
    func ownNode(of owner: ServiceOwner) -> ScopeNodeBuffer {
        var node = self
        while node.scope !== owner {
            guard let up = node.up else { preconditionFailure("a scope's values lead to every scope above it") }
            node = up
        }
        return node.ownNode
    }
}

/// A heap box for a value: services a scope built, and the entry values a ``ScopeNode`` holds.
///
/// Boxes never change once made, so nodes and scopes share them instead of copying values.
///
/// `@unchecked Sendable`: the subclass holds one `let` of a `Sendable` type.
@usableFromInline
class AnyValueBox: @unchecked Sendable {
    @usableFromInline
    init() {}

    /// The type of the value the box holds, for diagnostics.
    var valueType: Any.Type { Never.self }

    /// For a ``Contributions`` list, what was contributed and where, for diagnostics.
    var contributionDescriptions: [String]? { nil }

    /// Closes the service this box holds, which `key` built, told `outcome`.
    ///
    /// A ``ServiceBox`` knows its key and closes its value directly; any other box asks `key` to
    /// cast it to its value's type, which looks that type's box up in the runtime's table.
    nonisolated(nonsending) func close(as key: any ScopedServiceKey.Type, outcome: ScopeOutcome) async throws {
        try await key.close(erased: self, outcome: outcome)
    }
}

/// An ``AnyValueBox`` holding a value of a known type.
@usableFromInline
class ValueBox<Value: Sendable>: AnyValueBox, @unchecked Sendable {
    @usableFromInline
    let value: Value

    @usableFromInline
    init(_ value: Value) {
        self.value = value
    }

    /// `Value`.
    override var valueType: Any.Type { Value.self }

    /// The list's contributions, when `Value` is a ``Contributions`` list.
    override var contributionDescriptions: [String]? {
        (value as? any DescribedContributions)?.contributionDescriptions
    }
}

/// The box of a service built with its key's `makeValue()`: what a scope closes it with is
/// one call of the box, with no cast.
@usableFromInline
final class ServiceBox<Key: ScopedServiceKey>: ValueBox<Key.Value>, @unchecked Sendable {
    @usableFromInline
    override init(_ value: Key.Value) {
        super.init(value)
    }

    /// Closes the value with `Key`'s `close`.
    nonisolated(nonsending) override func close(
        as key: any ScopedServiceKey.Type,
        outcome: ScopeOutcome
    ) async throws {
        try await Key.close(value, outcome: outcome)
    }
}
