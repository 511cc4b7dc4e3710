/// Told when a read finds no value set and falls back to its key's default.
///
/// A test root installs one so that ScopedTesting records a failure when a test reads a
/// live-only entry it did not override; ``ScopedValues/entryName(of:)`` installs one on a throwaway node to
/// learn which key a key path reads; an app service's construction runs on a node with one that
/// records what it reads (``InputRecording``). Normal scopes have none, so a read pays one
/// `nil` check.
@usableFromInline
final class DefaultReadObserver: Sendable {
    private let onLiveDefaultRead: (@Sendable (_ entry: String) -> Void)?
    private let onDefaultRead: (@Sendable (_ key: Any.Type) -> Void)?
    /// The scopes open on the test's roots; only test roots have it.
    let openWork: OpenWorkTracker?
    /// Answers, and records, every read of a construction's empty node from the root's values.
    let recording: InputRecording?

    /// An observer for test roots: `onLiveDefaultRead` is told the name of each live-only entry
    /// read without an override, and the read returns the key's `testValue`; `openWork` is told
    /// each scope that opens and closes on the test's roots.
    init(
        onLiveDefaultRead: @escaping @Sendable (_ entry: String) -> Void,
        openWork: OpenWorkTracker? = nil
    ) {
        self.onLiveDefaultRead = onLiveDefaultRead
        self.onDefaultRead = nil
        self.openWork = openWork
        self.recording = nil
    }

    /// An observer told the key type of every read that falls back to a default.
    init(onDefaultRead: @escaping @Sendable (_ key: Any.Type) -> Void) {
        self.onLiveDefaultRead = nil
        self.onDefaultRead = onDefaultRead
        self.openWork = nil
        self.recording = nil
    }

    /// An observer that answers every read from the root `recording` reads, and records it.
    init(recording: InputRecording) {
        self.onLiveDefaultRead = nil
        self.onDefaultRead = nil
        self.openWork = nil
        self.recording = recording
    }

    /// Whether this observer belongs to a test root.
    var isTestObserver: Bool { onLiveDefaultRead != nil }

    /// The value a read of `key` that found nothing set returns.
    @usableFromInline
    func defaultValue<K: ScopedKey>(for key: K.Type) -> K.Value {
        if let recording { return recording.read(key) }
        onDefaultRead?(key)
        if let onLiveDefaultRead, let testValue = K.testValue {
            onLiveDefaultRead(ScopedValues.entryName(of: key))
            return testValue
        }
        return K.defaultValue
    }

    /// The object a read of `type` that found none set returns: none, except in a recorded
    /// construction.
    @usableFromInline
    func object<T: Sendable>(_ type: T.Type) -> T? {
        recording?.object(type)
    }

    /// The service provided with `set(_:to:)` that a read of `key` that found none set sees,
    /// in a box: none, except in a recorded construction. (Called with a key whose type is
    /// known only at run time, which Swift opens for it.)
    func providedServiceBox<K: ScopedServiceKey>(_ key: K.Type) -> AnyValueBox? {
        recording?.providedService(key).map { ValueBox($0) }
    }
}
