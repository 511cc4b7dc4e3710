/// Told when a read finds no value set and falls back to its key's default.
///
/// A test root installs one so that ScopedTesting records a failure when a test reads a
/// live-only entry it did not override; ``ScopedVariants`` installs one on a throwaway node to
/// learn which key a key path reads. Normal scopes have none, so a read pays one `nil` check.
@usableFromInline
package final class DefaultReadObserver: Sendable {
    private let onLiveDefaultRead: (@Sendable (_ entry: String) -> Void)?
    private let onDefaultRead: (@Sendable (_ key: Any.Type) -> Void)?
    /// The scopes open on the test's roots; only test roots have it.
    package let openWork: OpenWorkTracker?

    /// An observer for test roots: `onLiveDefaultRead` is told the name of each live-only entry
    /// read without an override, and the read returns the key's `testValue`; `openWork` is told
    /// each scope that opens and closes on the test's roots.
    package init(
        onLiveDefaultRead: @escaping @Sendable (_ entry: String) -> Void,
        openWork: OpenWorkTracker? = nil
    ) {
        self.onLiveDefaultRead = onLiveDefaultRead
        self.onDefaultRead = nil
        self.openWork = openWork
    }

    /// An observer told the key type of every read that falls back to a default.
    package init(onDefaultRead: @escaping @Sendable (_ key: Any.Type) -> Void) {
        self.onLiveDefaultRead = nil
        self.onDefaultRead = onDefaultRead
        self.openWork = nil
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
