import Scoped
import Synchronization
import Testing

// The public hooks test support is written on (`ScopeRoot.testRoot` and a `ScopeObserver`), used
// as a test library outside this package would: this file imports the core without `@testable`.

private enum LiveOnlyClockKey: ScopedKey {
    static let defaultValue = "the live clock"
    static var testValue: String? { "a test clock" }
}

private enum GreetingKey: ScopedKey {
    static let defaultValue = "Hello"
}

/// What the test library below recorded.
private let recorded = Mutex<[String]>([])

// SNIPPET-BEGIN
struct LiveOnlyCheck: ScopeObserver {
    let record: @Sendable (String) -> Void
    var events: ScopeObserverEvents { [.defaultReads, .nestedRoots] }

    func defaultValue<Key: ScopedKey>(for key: Key.Type) -> Key.Value? {
        guard let testValue = Key.testValue else { return nil }
        record("\(Key.name) read its live default")
        return testValue
    }
}
// SNIPPET-END

/// A test library's run of one test, as the `ScopeRoot.testRoot` doc shows it; its `Issue` is
/// this file's stand-in, which keeps what it is told.
private func runAsATest(_ test: () async throws -> Void) async throws {
    enum Issue {
        static func record(_ comment: String) { recorded.withLock { $0.append(comment) } }
    }
    // SNIPPET-BEGIN
    let root = ScopeRoot.testRoot(observers: [LiveOnlyCheck { Issue.record("\($0)") }])
    try await root.withScope { try await test() }
    await root.shutdown()
    // SNIPPET-END
}

@Suite(.serialized)
struct TestRootTests {
    @Test func aLiveOnlyEntryReadsItsTestValueAndIsReportedOnTheTestRootAndTheRootsMadeInIt() async throws {
        recorded.withLock { $0 = [] }
        try await runAsATest {
            #expect(ScopedValues.current[LiveOnlyClockKey.self] == "a test clock")
            #expect(ScopedValues.current[GreetingKey.self] == "Hello")
            #expect(ScopedValues.current.isTestScope)
            #expect(ScopedValues.current.isOnTestsOwnRoot)
            // An application the test builds, serving a request.
            let app = ScopeRoot()
            try await app.withScope {
                #expect(ScopedValues.current[LiveOnlyClockKey.self] == "a test clock")
                #expect(ScopedValues.current.isTestScope)
                #expect(!ScopedValues.current.isOnTestsOwnRoot)
            }
            await app.shutdown()
        }
        #expect(recorded.withLock { $0 } == Array(repeating: "liveOnlyClock read its live default", count: 2))
        // An application's root outside any test reads the live default and reports nothing.
        let production = ScopeRoot()
        let read = try await production.withScope { ScopedValues.current[LiveOnlyClockKey.self] }
        #expect(read == "the live clock")
        #expect(try await production.withScope { ScopedValues.current.isTestScope } == false)
        await production.shutdown()
    }

    @Test func aTestRootIsATestsWithoutAnyObserverAndAnApplicationRootIsNot() async throws {
        let root = ScopeRoot.testRoot()
        try await root.withScope {
            #expect(ScopedValues.current.isTestScope)
            // Nothing answers for the live-only entry: it reads its default.
            #expect(ScopedValues.current[LiveOnlyClockKey.self] == "the live clock")
            let app = ScopeRoot()
            try await app.withScope { #expect(ScopedValues.current.isTestScope) }
            await app.shutdown()
            // A root that starts from defaults is not made in the test.
            let apart = ScopeRoot(startingFrom: ScopedValues()) { _ in }
            try await apart.withScope { #expect(!ScopedValues.current.isTestScope) }
            await apart.shutdown()
        }
        await root.shutdown()
        let plain = ScopeRoot(startingFrom: ScopedValues(), observers: [LiveOnlyCheck { _ in }]) { _ in }
        try await plain.withScope { #expect(!ScopedValues.current.isTestScope) }
        await plain.shutdown()
    }
}
