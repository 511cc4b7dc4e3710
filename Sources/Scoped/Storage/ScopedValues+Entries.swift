import Synchronization

/// What a scope holds, listed without building or reading anything: what ScopedDiagnostics'
/// `describe()` and a test library's report of work left open are written on.
extension ScopedValues {
    /// An entry set in a scope: its name, its value's type, its kind and the depth of the scope
    /// that set it.
    public struct StoredEntry: Hashable, Sendable {
        /// The entry's name: the property name of an `@Entry`, a service's name, an object's type.
        public let name: String
        /// The type of the value stored, as `String(reflecting:)` names it.
        public let valueType: String
        /// Whether it is a plain value, an object, or a service provided from outside.
        public let kind: ScopedValues.EntryKind
        /// For a service provided from outside with `set(_:to:)`: its lifetime; `nil` otherwise.
        public let lifetime: ScopedLifetime?
        /// The depth of the scope that set it: 0 for the application root, 1 for a scope opened
        /// on it.
        public let depth: Int
        /// For a ``Contributions`` list: each contribution, in order, with where it was made
        /// (`"service databaseCheck from CatalogApp/Health.swift:12 at depth 0"`); `nil` for
        /// any other entry.
        public let contributions: [String]?
    }

    /// A service the application root registered with `ScopeRoot(services:)`, and whether the
    /// scope that owns it, seen from these values, has built it.
    public struct RegisteredService: Hashable, Sendable {
        /// The service's name.
        public let name: String
        /// The type of the service's value, as `String(reflecting:)` names it.
        public let valueType: String
        /// Which scope owns it.
        public let lifetime: ScopedLifetime
        /// Whether its owner (the root, these values' tenant, or their scope) has built it;
        /// `false` where no scope owns it, such as a ``ScopedLifetime/scope`` service at a root.
        public let isBuilt: Bool
    }

    /// How many scopes were opened below the application root to reach these values: 0 at the
    /// root, 1 in a request's scope.
    @inlinable
    public var depth: Int { node.depth }

    /// Every entry set in these values or inherited from the scopes they were opened in, the
    /// nearest setting of each, in no particular order.
    ///
    /// Nothing is built or read: a debug endpoint may list the entries of a live request.
    public var storedEntries: [StoredEntry] {
        node.buffer.entries.map { slot in
            let keyType = slot.keyType
            let info = slot.info
            let name =
                switch info.kind {
                case .value: ScopedValues.entryName(of: keyType)
                case .object: String(reflecting: keyType)
                case .service: (keyType as? any ScopedServiceKey.Type)?.name ?? String(describing: keyType)
                }
            return StoredEntry(
                name: name,
                valueType: String(reflecting: slot.box?.valueType ?? Never.self),
                kind: info.kind,
                lifetime: info.lifetime,
                depth: info.depth,
                contributions: slot.box?.contributionDescriptions
            )
        }
    }

    /// The services the application root registered, each with whether its owner has built it.
    public var registeredServices: [RegisteredService] {
        (scope?.registry.services ?? [])
            .map { service in
                let owner = scope?.owner(at: service.lifetime)
                return RegisteredService(
                    name: service.name,
                    valueType: service.valueType,
                    lifetime: service.lifetime,
                    isBuilt: owner?.isBuilt(service.id) ?? false
                )
            }
    }

    /// The name of the entry `keyPath` reads, or `nil` when it reads none.
    ///
    /// The entry is the first one a read through `keyPath`, on values where nothing is set,
    /// falls back to the default of.
    ///
    /// For a module that names entries by key path, as configuration does (ScopedDiagnostics'
    /// variants). The read runs the entry's default once; nothing else is built.
    public static func entryName<Value>(of keyPath: WritableKeyPath<ScopedValues, Value>) -> String? {
        let firstKey = Mutex<Any.Type?>(nil)
        let observer = DefaultReadObserver { key in
            firstKey.withLock { first in if first == nil { first = key } }
        }
        let probe = ScopedValues(node: ScopeNode(.make(capacity: 0, depth: 0, scope: nil, observer: observer)))
        _ = probe[keyPath: keyPath]
        return firstKey.withLock { $0 }.map(ScopedValues.entryName(of:))
    }
}

extension ScopeNodeBuffer {
    /// Every slot this node sees, in no particular order: the overlay's, and the base's that the
    /// overlay does not replace.
    var entries: [Slot] {
        let own = overlay.table.filter { $0.box != nil }
        guard let base else { return own }
        let keys = Set(own.map(\.identity))
        return own + base.entries.filter { !keys.contains($0.identity) }
    }
}

/// What the storage knows of an entry beyond its key and its value's type, packed in one word.
///
/// Why a word: it lives in every slot of every node, and copying a node's overlay copies it.
/// The key type and the value's type are kept by the slot and its box;
/// ``ScopedValues/StoredEntry`` is the unpacked form, made only when a scope's entries are listed.
///
/// Layout, from the low bits: kind (2), lifetime (2: none, app, scope, tenant), and the depth of
/// the node that set the entry (32).
@usableFromInline
struct EntryInfo: Sendable {
    @usableFromInline
    var bits: UInt64

    /// The info of an empty slot.
    static var none: EntryInfo { EntryInfo(kind: .value, lifetime: nil, depth: 0) }

    /// The info of an entry of `kind` set at `depth`; `lifetime` only for services provided
    /// from outside.
    @inlinable
    init(kind: ScopedValues.EntryKind, lifetime: ScopedLifetime?, depth: Int) {
        let kindBits: UInt64 =
            switch kind {
            case .value: 0
            case .object: 1
            case .service: 2
            }
        let lifetimeBits: UInt64 =
            switch lifetime {
            case nil: 0
            case .app: 1
            case .scope: 2
            case .tenant: 3
            }
        bits = kindBits | lifetimeBits << 2 | UInt64(UInt32(truncatingIfNeeded: depth)) << 32
    }

    /// What kind of entry holds the value.
    var kind: ScopedValues.EntryKind {
        switch bits & 0b11 {
        case 0: .value
        case 1: .object
        default: .service
        }
    }

    /// For a service provided from outside, its lifetime.
    var lifetime: ScopedLifetime? {
        switch bits >> 2 & 0b11 {
        case 1: .app
        case 2: .scope
        case 3: .tenant
        default: nil
        }
    }

    /// The depth of the node that set the entry: 0 for the root.
    var depth: Int { Int(bits >> 32) }
}

extension ScopedValues {
    /// What kind of entry a scope describes.
    public enum EntryKind: String, Hashable, Sendable, Codable, CustomStringConvertible {
        /// A plain value, declared with `@Entry` or a ``ScopedKey``.
        case value
        /// An object stored under its type with ``ScopedValues/set(_:)``.
        case object
        /// A service with a ``ScopedLifetime``, declared with a ``ScopedServiceKey``.
        case service

        /// A description for logs and error messages.
        public var description: String { rawValue }
    }
}
