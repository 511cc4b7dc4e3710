import Scoped
import Synchronization
import Testing

// The public hooks test support is written on (`ScopeRoot.testRoot`, `workStillOpen`), used as
// a test library outside this package would: this file imports the core without `@testable`.

private enum LiveOnlyClockKey: ScopedKey {
    static let defaultValue = "the live clock"
    static var testValue: String? { "a test clock" }
}

private enum GreetingKey: ScopedKey {
    static let defaultValue = "Hello"
}

/// What the test library below recorded.
private let recorded = Mutex<[String]>([])

/// A test library's run of one test, as the `ScopeRoot.testRoot` doc shows it; its `Issue` is
/// this file's stand-in, which keeps what it is told.
private func runAsATest(grace: Duration, _ test: () async throws -> Void) async throws {
    enum Issue {
        static func record(_ comment: String) { recorded.withLock { $0.append(comment) } }
    }
    // SNIPPET-BEGIN
    let root = ScopeRoot.testRoot { entry in Issue.record("\(entry) read its live default") }
    try await root.withScope { try await test() }
    for work in await root.workStillOpen(after: grace) { Issue.record("left running: \(work)") }
    await root.shutdown()
    // SNIPPET-END
}

@Suite(.serialized)
struct TestRootTests {
    @Test func aLiveOnlyEntryReadsItsTestValueAndIsReportedOnTheTestRootAndTheRootsMadeInIt() async throws {
        recorded.withLock { $0 = [] }
        try await runAsATest(grace: .zero) {
            #expect(ScopedValues.current[LiveOnlyClockKey.self] == "a test clock")
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

    @Test func aScopeLeftOpenOnARootMadeInTheTestIsNamedByTheEntriesItSet() async throws {
        recorded.withLock { $0 = [] }
        let leftOpen = Mutex<Scope?>(nil)
        try await runAsATest(grace: .milliseconds(50)) {
            let app = ScopeRoot()
            let scope = try app.openScope { $0[GreetingKey.self] = "Ahoy" }
            leftOpen.withLock { $0 = scope }
        }
        #expect(recorded.withLock { $0 } == ["left running: a scope at depth 1, which set greeting"])
        try await leftOpen.withLock { $0 }?.close(.success)
        // A root that is not a test's tracks nothing.
        let production = ScopeRoot()
        let scope = production.openScope()
        #expect(await production.workStillOpen(after: .zero) == [])
        try await scope.close(.success)
        await production.shutdown()
    }
}
