/// Answers a read that finds no value set, in place of its key's default.
///
/// A root whose observers take ``ScopeObserverEvents/defaultReads`` (a test's) has one that asks
/// them; ``ScopedValues/entryName(of:)`` installs one on a throwaway node to learn which key a
/// key path reads; an app service's construction runs on a node with one that records what it
/// reads (``InputRecording``); ``ScopeNode/empty``, and every node made from it outside a root,
/// has one that asks ``ReadsOutsideEveryRoot``. Other scopes have none, so a read pays one `nil`
/// check.
@usableFromInline
final class DefaultReadObserver: Sendable {
    private let readers: [any ScopeObserver]
    private let onDefaultRead: (@Sendable (_ key: Any.Type) -> Void)?
    /// Answers, and records, every read of a construction's empty node from the root's values.
    let recording: InputRecording?

    /// An observer that asks `readers`, in order, for the value of each entry read unset.
    init(readers: [any ScopeObserver]) {
        self.readers = readers
        self.onDefaultRead = nil
        self.recording = nil
    }

    /// An observer told the key type of every read that falls back to a default.
    init(onDefaultRead: @escaping @Sendable (_ key: Any.Type) -> Void) {
        self.readers = []
        self.onDefaultRead = onDefaultRead
        self.recording = nil
    }

    /// An observer that answers every read from the root `recording` reads, and records it.
    init(recording: InputRecording) {
        self.readers = []
        self.onDefaultRead = nil
        self.recording = recording
    }

    /// The value a read of `key` that found nothing set returns.
    @usableFromInline
    func defaultValue<K: ScopedKey>(for key: K.Type) -> K.Value {
        if let recording { return recording.read(key) }
        onDefaultRead?(key)
        for reader in readers {
            if let value = reader.defaultValue(for: key) { return value }
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
