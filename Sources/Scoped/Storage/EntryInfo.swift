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
    init(kind: EntryKind, lifetime: ScopedLifetime?, depth: Int) {
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
    var kind: EntryKind {
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
