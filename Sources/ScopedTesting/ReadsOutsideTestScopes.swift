import Scoped
import Synchronization
import Testing

/// The check ScopedTesting installs for the whole test process, the first time a `.scoped` trait
/// is made or a `withTestScope` runs: a live-only entry read outside every root (on an event
/// loop, a callback thread or a detached task, where no test scope reaches) fails the test run
/// and reads its `testValue`, never its live default.
///
/// Attributed to a test where one can be found: the test whose task made the read, else the one
/// test running in a test scope (recorded when its scope ends), else recorded as Swift Testing
/// records an issue outside every test, which fails the run all the same.
struct ReadsOutsideTestScopes: ScopeObserver {
    /// Installs the check, once for the process; every later use finds it installed.
    static let installed: Void = {
        _ = ScopedValues.bootstrapReadsOutsideEveryRoot(with: ReadsOutsideTestScopes())
    }()

    var events: ScopeObserverEvents { .defaultReads }

    func defaultValue<Key: ScopedKey>(for key: Key.Type) -> Key.Value? {
        guard let testValue = Key.testValue else { return nil }
        let message = Comment(rawValue: Self.message(entry: Key.name))
        if let test = Test.current {
            Issue.record(message, sourceLocation: test.sourceLocation)
        } else if let checks = RunningTestScopes.theOnlyOne {
            checks.recordWhenTheTestEnds(message)
        } else {
            Issue.record(message)
        }
        return testValue
    }

    /// The failure recorded for a live-only entry read outside every scope.
    static func message(entry: String) -> String {
        "'\(entry)' is live-only, and was read outside every scope, where no test scope reaches (an event "
            + "loop, a callback thread, a detached task, a test with no `.scoped` trait): its stand-in was read, "
            + "not its live default. Capture `let values = ScopedValues.current` where the work is handed over "
            + "and read in `withScopedValues(values) { … }` where it runs, or give the test `.scoped { }`."
    }
}

/// The test scopes open in the process (`withTestScope`, the `.scoped` trait's), by their checks:
/// where a read outside every scope finds the test it belongs to when only one runs.
enum RunningTestScopes {
    private static let open = Mutex<[ObjectIdentifier: TestChecks]>([:])

    /// Runs `operation` with `checks` counted as a running test scope's.
    nonisolated(nonsending) static func running<R>(
        _ checks: TestChecks,
        _ operation: () async throws -> R
    ) async rethrows -> R {
        let id = ObjectIdentifier(checks)
        open.withLock { $0[id] = checks }
        defer { _ = open.withLock { $0.removeValue(forKey: id) } }
        return try await operation()
    }

    /// The checks of the one test scope open, or `nil` if none is or several are.
    static var theOnlyOne: TestChecks? {
        open.withLock { $0.count == 1 ? $0.values.first : nil }
    }
}
