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

struct OutsideTestScopeTests {
    @Test func liveOnlyEntryReadsItsDefaultOutsideTestScopes() {
        #expect(!ScopedValues.current.isTestScope)
        #expect(ScopedValues.current.liveGreeting == "live")
    }
}
