import Synchronization

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
