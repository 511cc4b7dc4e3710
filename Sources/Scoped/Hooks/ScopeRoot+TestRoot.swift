import Synchronization

/// The hooks test support is written on: ScopedTesting's `withTestScope` and `.scoped` trait
/// use nothing else of the core that an application could not.
extension ScopeRoot {
    /// Creates a test's own root: the root ScopedTesting's `withTestScope` and `.scoped` trait run
    /// a test on.
    ///
    /// A test root, and every root created in its scopes (an application the test builds, which
    /// serves the test's requests), differs from an application's root in three ways:
    /// - a read of a live-only entry (a key with a `testValue`) that nothing set returns the
    ///   `testValue`, and `onLiveDefaultRead` is called with the entry's name, for the test to
    ///   fail with it;
    /// - ``ScopedValues/isTestScope`` is true in their scopes, and
    ///   ``ScopedValues/isOnTestsOwnRoot`` in the test root's own;
    /// - ``workStillOpen(after:)`` names the scopes still open on any of them.
    ///
    /// And a tenant not open yet that a test root opens from one of its own scopes (a suite's,
    /// with ``withScope(tenant:_:operation:)``) starts from that scope's values rather than the
    /// root's: a test's tenant keeps what its suite set, its mocks and its database.
    ///
    /// ```swift
    /// let root = ScopeRoot.testRoot { entry in Issue.record("\(entry) read its live default") }
    /// try await root.withScope { try await test() }
    /// for work in await root.workStillOpen(after: grace) { Issue.record("left running: \(work)") }
    /// await root.shutdown()
    /// ```
    ///
    /// - Parameters:
    ///   - observers: What the test root reports to and opens its tenants with, as
    ///     ``init(startingFrom:services:requirements:onCloseError:closeTimeout:observers:configure:)``
    ///     takes them; none by default.
    ///   - onLiveDefaultRead: Told the name of each live-only entry read without an override, on
    ///     any of the roots.
    /// - Returns: A root with nothing set, to open the test's scope on.
    public static func testRoot(
        observers: [any ScopeObserver] = [],
        onLiveDefaultRead: @escaping @Sendable (_ entry: String) -> Void
    ) -> ScopeRoot {
        let observer = DefaultReadObserver(onLiveDefaultRead: onLiveDefaultRead, openWork: OpenWorkTracker())
        let (observers, tenantProvider) = RootObservers.forRoot(observers, registering: [])
        return ScopeRoot(
            registry: ScopeRegistry(observer: observer, isTestRoot: true, observers: observers),
            tenantProvider: tenantProvider
        ) { _ in }
    }

    /// The scopes still open on this test root and on the roots created in its scopes, each
    /// described by the work handed off in it or the entries it set; empty when every scope
    /// closed within `grace`, and on a root that is not a test's.
    ///
    /// Only time in which the process ran counts toward `grace`, so that work which could not
    /// run (every thread busy with other tests) is not reported for it.
    ///
    /// - Parameter grace: How long to wait for the scopes to close.
    /// - Returns: A description of each scope still open, sorted.
    public func workStillOpen(after grace: Duration) async -> [String] {
        guard let openWork = context.registry.observer?.openWork else { return [] }
        return await openWork.stillOpen(after: grace)
    }
}

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

/// The scopes open on the roots of one test, for ScopedTesting's check that a test leaves
/// nothing running: a test root's observer holds one, and every root made inside the test
/// shares it.
///
/// Outside tests no root has one, and opening or closing a scope pays one `nil` check.
final class OpenWorkTracker: Sendable {
    private struct Open {
        let values: ScopedValues
        let label: String?
    }

    private let open = Mutex<[ObjectIdentifier: Open]>([:])

    init() {}

    /// Records `context` open, with the values it was opened with and, for handed-off work,
    /// where it was handed off.
    func opened(_ context: ServiceOwner, values: ScopedValues, label: String?) {
        open.withLock { $0[ObjectIdentifier(context)] = Open(values: values, label: label) }
    }

    func closed(_ context: ServiceOwner) {
        _ = open.withLock { $0.removeValue(forKey: ObjectIdentifier(context)) }
    }

    /// What is still open, waiting up to `grace` for it to close first: a description of each,
    /// naming the handed-off work or the entries its scope set.
    ///
    /// Only time in which the process ran counts towards `grace`: a wait of 10 ms that took far
    /// longer (every thread of the cooperative pool blocked by other tests' synchronous work)
    /// counts as 50 ms, so that work which could not run is not reported for it.
    func stillOpen(after grace: Duration) async -> [String] {
        let clock = ContinuousClock()
        var waited = Duration.zero
        while open.withLock({ !$0.isEmpty }) && waited < grace {
            let before = clock.now
            try? await Task.sleep(for: .milliseconds(10))
            waited += min(clock.now - before, .milliseconds(50))
        }
        return open.withLock { open in open.values.map(Self.describe).sorted() }
    }

    private static func describe(_ open: Open) -> String {
        if let label = open.label { return label }
        let depth = open.values.depth
        let own = open.values.storedEntries.filter { $0.depth == depth }.map(\.name).sorted()
        return own.isEmpty
            ? "a scope at depth \(depth), which set no entry"
            : "a scope at depth \(depth), which set \(own.joined(separator: ", "))"
    }
}
