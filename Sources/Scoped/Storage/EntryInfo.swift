/// What diagnostics know of an entry beyond its key and its value's type, packed in one word.
///
/// Why a word: it lives in every slot of every node, and copying a node's overlay copies it. A
/// plain struct with the variant's name made a slot twice as large and a `withScopedValues`
/// with two overrides 35–50% slower (BENCHMARKS.md, session 22).
/// The key type and the value's type are kept by the slot and its box. ``StoredEntry`` is the
/// unpacked form, made only when a scope is described.
///
/// Layout, from the low bits: kind (2), lifetime (2: none, app, scope, tenant), origin (2: default,
/// root, configuration, override), variant (26: a ``VariantNames`` index, 0 for none), and
/// the override's depth (32).
@usableFromInline
struct EntryInfo: Sendable {
    @usableFromInline
    var bits: UInt64

    /// The info of an empty slot.
    static var none: EntryInfo { EntryInfo(kind: .value, lifetime: nil, origin: .default, variant: 0) }

    /// The info of an entry of `kind` set with `origin`; `lifetime` only for services provided
    /// from outside, `variant` only while a variant is applied.
    @inlinable
    init(kind: EntryKind, lifetime: ScopedLifetime?, origin: EntryOrigin, variant: UInt32) {
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
        let (originBits, depth): (UInt64, UInt64) =
            switch origin {
            case .default: (0, 0)
            case .root: (1, 0)
            case .configuration: (2, 0)
            case .override(let depth): (3, UInt64(UInt32(truncatingIfNeeded: depth)))
            }
        bits = kindBits | lifetimeBits << 2 | originBits << 4 | UInt64(variant & 0x3FF_FFFF) << 6 | depth << 32
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

    /// Where the value came from.
    var origin: EntryOrigin {
        switch bits >> 4 & 0b11 {
        case 0: .default
        case 1: .root
        case 2: .configuration
        default: .override(depth: Int(bits >> 32))
        }
    }

    /// The ``VariantNames`` index of the variant that set the value, or 0.
    var variant: UInt32 { UInt32(truncatingIfNeeded: bits >> 6) & 0x3FF_FFFF }
}
