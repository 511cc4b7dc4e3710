/// Told when a read finds no value set and falls back to its key's default.
///
/// A test root installs one so that ScopedTesting records a failure when a test reads a
/// live-only entry it did not override; ``ScopedVariants`` installs one on a throwaway node to
/// learn which key a key path reads. Normal scopes have none, so a read pays one `nil` check.
@usableFromInline
package final class DefaultReadObserver: Sendable {
    private let onLiveDefaultRead: (@Sendable (_ entry: String) -> Void)?
    private let onDefaultRead: (@Sendable (_ key: Any.Type) -> Void)?

    /// An observer for test roots: `onLiveDefaultRead` is told the name of each live-only entry
    /// read without an override, and the read returns the key's `testValue`.
    package init(onLiveDefaultRead: @escaping @Sendable (_ entry: String) -> Void) {
        self.onLiveDefaultRead = onLiveDefaultRead
        self.onDefaultRead = nil
    }

    /// An observer told the key type of every read that falls back to a default.
    package init(onDefaultRead: @escaping @Sendable (_ key: Any.Type) -> Void) {
        self.onLiveDefaultRead = nil
        self.onDefaultRead = onDefaultRead
    }

    /// Whether this observer belongs to a test root.
    package var isTestObserver: Bool { onLiveDefaultRead != nil }

    /// The value a read of `key` that found nothing set returns.
    @usableFromInline
    func defaultValue<K: ScopedKey>(for key: K.Type) -> K.Value {
        onDefaultRead?(key)
        if let onLiveDefaultRead, let testValue = K.testValue {
            onLiveDefaultRead(ScopedValues.entryName(of: key))
            return testValue
        }
        return K.defaultValue
    }
}
