/// What diagnostics know of an entry beyond its key and its value's type.
///
/// A slot keeps the key type and its box the value's type; ``StoredEntry`` is all of it
/// together, made only when a scope is described.
@usableFromInline
package struct EntryInfo: Sendable {
    /// What kind of entry holds the value.
    @usableFromInline package var kind: EntryKind
    /// For a service provided from outside, its lifetime.
    @usableFromInline package var lifetime: ScopedLifetime?
    /// Where the value came from.
    @usableFromInline package var origin: EntryOrigin
    /// The named variant that set the value, if one did.
    @usableFromInline package var variant: String?

    /// The info of an entry of `kind` set with `origin`; `lifetime` only for services provided
    /// from outside, `variant` only while a variant is applied.
    @inlinable
    package init(kind: EntryKind, lifetime: ScopedLifetime? = nil, origin: EntryOrigin, variant: String? = nil) {
        self.kind = kind
        self.lifetime = lifetime
        self.origin = origin
        self.variant = variant
    }
}
