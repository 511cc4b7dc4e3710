import Synchronization
import Scoped
import ScopedTesting
import Testing

@Suite(
    .scoped {
        $0.greeting = "suite"
        $0.locale = "fr"
    }
)
struct ScopedTraitTests {
    @Test func suiteTraitOverridesEveryTest() {
        #expect(ScopedValues.current.greeting == "suite")
        #expect(ScopedValues.current.isTestScope)
    }

    @Test(.scoped { $0.greeting = "test" })
    func testTraitWinsOverTheSuiteTrait() {
        #expect(ScopedValues.current.greeting == "test")
        #expect(ScopedValues.current.locale == "fr")
    }

    @Test(.scoped { $0.clock = FixedClock(time: 42) })
    func childTasksSeeTheOverrides() async {
        async let fromChild = ScopedValues.current.clock.now()
        let fromTask = await Task { ScopedValues.current.clock.now() }.value
        #expect(await fromChild == 42)
        #expect(fromTask == 42)
    }

    @Test(.scoped { $0.clock = FixedClock(time: 7) }, arguments: 0..<64)
    func parallelTestsNeverSeeEachOthersOverrides(index: Int) async throws {
        try await withScopedValues({ $0.greeting = "case \(index)" }) {
            try await Task.sleep(for: .milliseconds(Int.random(in: 0...5)))
            #expect(ScopedValues.current.greeting == "case \(index)")
            #expect(ScopedValues.current.clock.now() == 7)
        }
    }

    @Test(.scoped(), arguments: 0..<32)
    func appServicesStartFreshInEveryTest(index: Int) async throws {
        let counter = try await ScopedValues.current.service(VisitCounterKey.self)
        #expect(counter.visit() == 1, "test case \(index) must not see visits from other tests")
    }

    @Test(.scoped())
    func readingALiveOnlyEntryWithoutAnOverrideRecordsAFailureAndNeverBuildsTheLiveValue() {
        let constructionsBefore = SystemClock.constructions.withLock { $0 }
        withKnownIssue {
            #expect(ScopedValues.current.clock.now() == 0, "the test value is read instead")
        } matching: { issue in
            let text = String(describing: issue)
            // Reported at the test, not at a line of the library.
            return text.contains("'clock' is live-only") && issue.sourceLocation?.fileName == "ScopedTraitTests.swift"
                && text.contains("@Test(.scoped { $0.clock = <#test value#> })")
        }
        #expect(SystemClock.constructions.withLock { $0 } == constructionsBefore)
    }

    @Test(.scoped { $0.clock = FixedClock(time: 5) })
    func overriddenLiveOnlyEntryRecordsNothing() {
        #expect(ScopedValues.current.clock.now() == 5)
    }

}

/// In a process that runs `.scoped` tests, a live-only entry read outside every scope fails the
/// test whose task read it, and reads its stand-in; a read that is not live-only, or one a scope
/// overrode, records nothing.
struct OutsideTestScopeTests {
    @Test func aLiveOnlyEntryReadOutsideEveryScopeFailsTheTestAndReadsItsStandIn() {
        #expect(!ScopedValues.current.isTestScope)
        withKnownIssue {
            #expect(ScopedValues.current.liveGreeting == "stand-in", "never the live default")
        } matching: { issue in
            // Reported at the test, not at a line of the library.
            issue.comments.contains {
                $0.rawValue.contains("'liveGreeting' is live-only, and was read outside every scope")
            } && issue.sourceLocation?.fileName == "ScopedTraitTests.swift"
        }
    }

    @Test func valuesMadeOutsideEveryRootAreCheckedToo() {
        withKnownIssue {
            #expect(ScopedValues().liveGreeting == "stand-in")
        } matching: { issue in
            issue.comments.contains { $0.rawValue.contains("'liveGreeting' is live-only") }
        }
    }

    @Test func anEntryThatIsNotLiveOnlyOrIsOverriddenReadsAsBeforeOutsideEveryScope() {
        #expect(ScopedValues.current.greeting == "hello")
        withScopedValues({ $0.liveGreeting = "set" }) {
            #expect(ScopedValues.current.liveGreeting == "set")
        }
    }

    /// Installed once for the process, as a bootstrap is: another observer is refused, and the
    /// reads keep going to ScopedTesting's.
    @Test(.scoped()) func theCheckIsInstalledOnceAndAnotherBootstrapIsRefused() {
        struct Other: ScopeObserver {
            func defaultValue<Key: ScopedKey>(for key: Key.Type) -> Key.Value? { nil }
        }
        #expect(!ScopedValues.bootstrapReadsOutsideEveryRoot(with: Other()))
        withKnownIssue {
            #expect(ScopedValues().liveGreeting == "stand-in")
        } matching: { issue in
            issue.comments.contains { $0.rawValue.contains("'liveGreeting' is live-only") }
        }
    }

    @Test func aRootMadeOutsideEveryTestScopeReadsItsOwnDefaultsUnchecked() async throws {
        let root = ScopeRoot { _ in }
        let read = try await root.withScope { ScopedValues.current.liveGreeting }
        await root.shutdown()
        #expect(read == "live", "an application's root a test builds on purpose reads what production reads")
    }
}
