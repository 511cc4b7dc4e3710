import Scoped
import Synchronization
import Testing

/// What ScopedTesting checks while a test runs, told by the test's root and by every root made in
/// its scopes (an application under test): the live-only entries read without an override, and
/// the scopes still open when the test ends.
///
/// An observer like any other (`ScopeObserver`), installed on the test's root; it takes
/// `nestedRoots`, so that the roots the test builds report to it too.
final class TestChecks: ScopeObserver {
    /// A scope open on one of the test's roots.
    private struct Open {
        let values: ScopedValues
        let site: HandedOffWork.Site?
    }

    private let onLiveDefaultRead: @Sendable (_ entry: String) -> Void
    private let open = Mutex<[ObjectIdentifier: Open]>([:])
    /// Scopes opened so far on roots made in the test's scopes (an application's request
    /// scopes), work handed off left out.
    private let applicationScopes = Atomic<Int>(0)

    /// Failures found outside the test's task while it ran, recorded when its scope ends.
    private let recordedForTheEnd = Mutex<[Comment]>([])

    /// Checks that record the name of each live-only entry read without an override with
    /// `onLiveDefaultRead`.
    init(onLiveDefaultRead: @escaping @Sendable (_ entry: String) -> Void) {
        self.onLiveDefaultRead = onLiveDefaultRead
    }

    var events: ScopeObserverEvents { [.scopes, .defaultReads, .nestedRoots] }

    /// A live-only entry (one with a `testValue`) read without an override: recorded, and read
    /// as its `testValue`, so that its live default never runs in a test.
    func defaultValue<Key: ScopedKey>(for key: Key.Type) -> Key.Value? {
        guard let testValue = Key.testValue else { return nil }
        onLiveDefaultRead(Key.name)
        return testValue
    }

    func scopeOpened(_ values: ScopedValues, handedOffAt site: HandedOffWork.Site?) {
        guard let id = values.scopeID else { return }
        if site == nil && !values.isOnTestsOwnRoot { applicationScopes.add(1, ordering: .relaxed) }
        open.withLock { $0[id] = Open(values: values, site: site) }
    }

    func scopeEnded(_ values: ScopedValues, outcome: ScopeOutcome) {
        guard let id = values.scopeID else { return }
        _ = open.withLock { $0.removeValue(forKey: id) }
    }

    /// Keeps `failure`, found where the test's task is not (on an event loop, say), to record
    /// as the test's when its scope ends.
    func recordWhenTheTestEnds(_ failure: Comment) {
        recordedForTheEnd.withLock { $0.append(failure) }
    }

    /// Records, as the current test's at its own source location, the failures kept for its end.
    func recordTheFailuresKeptForTheEnd() {
        let failures = recordedForTheEnd.withLock { kept in
            defer { kept = [] }
            return kept
        }
        for failure in failures {
            if let location = Test.current?.sourceLocation {
                Issue.record(failure, sourceLocation: location)
            } else {
                Issue.record(failure)
            }
        }
    }

    /// How many scopes roots made in the test's scopes have opened so far, handed-off work left
    /// out: an application's request scopes.
    var applicationScopesOpened: Int { applicationScopes.load(ordering: .relaxed) }

    /// The scopes still open on the test's roots, waiting up to `grace` for them to close
    /// first: a description of each, naming where its work was handed off or the entries its
    /// scope set, sorted.
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
        if let site = open.site { return "work handed off at \(site)" }
        let depth = open.values.depth
        let own = open.values.storedEntries.filter { $0.depth == depth }.map(\.name).sorted()
        return own.isEmpty
            ? "a scope at depth \(depth), which set no entry"
            : "a scope at depth \(depth), which set \(own.joined(separator: ", "))"
    }
}
