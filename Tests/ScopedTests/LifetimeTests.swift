import ScopedTestSupport
@testable import Scoped
import Synchronization
import Testing

struct LifetimeTests {
    @Test func appServiceIsBuiltExactlyOnceUnderConcurrentFirstReads() async throws {
        let (root, probe) = makeRoot()
        let identities = try await withThrowingTaskGroup(of: ObjectIdentifier.self) { group in
            for _ in 0..<1_000 {
                group.addTask {
                    try await root.withScope {
                        ObjectIdentifier(try await ScopedValues.current.service(SlowAppKey.self))
                    }
                }
            }
            return try await group.reduce(into: Set()) { $0.insert($1) }
        }
        #expect(probe.builds(of: "slowApp") == 1)
        #expect(identities.count == 1)
    }

    @Test func appServiceIsBuiltWithTheRootValuesNotTheRequestOverrides() async throws {
        let (root, _) = makeRoot()
        let label = try await root.withScope({ $0.serviceLabel = "request" }) {
            try await ScopedValues.current.service(AppClockKey.self).label
        }
        #expect(label == "root")
    }

    @Test func aScopeServiceReadUnderAnOverrideIsBuiltWithTheScopesOwnValues() async throws {
        let (root, _) = makeRoot()
        let labels = try await root.withScope({ $0.serviceLabel = "request" }) {
            try await withScopedValues({ $0.serviceLabel = "override" }) {
                // Nested scopes find their own values too: the inner scope's, and the root's.
                let inner = try await withScope({ $0.serviceLabel = "inner" }) {
                    try await withScopedValues({ $0.serviceLabel = "inner override" }) {
                        (
                            try await ScopedValues.current.service(SessionKey.self).label,
                            try await ScopedValues.current.service(AppClockKey.self).label
                        )
                    }
                }
                return (try await ScopedValues.current.service(SessionKey.self).label, inner)
            }
        }
        #expect(labels.0 == "request")
        #expect(labels.1 == ("inner", "root"))
    }

    @Test func aScopeWhoseValuesWereCopiedWhileTheyWereSetBuildsWithEveryValueSet() async throws {
        let (root, _) = makeRoot()
        let label = try await root.withScope({ values in
            // A copy kept across the write: the write copies the scope's node.
            let before = values
            values.serviceLabel = "request"
            withExtendedLifetime(before) {}
        }) {
            try await ScopedValues.current.service(SessionKey.self).label
        }
        #expect(label == "request")
    }

    @Test func eachRootBuildsItsOwnAppServices() async throws {
        let (first, _) = makeRoot()
        let (second, _) = makeRoot()
        let a = try await first.withScope { try await ScopedValues.current.service(AppClockKey.self) }
        let b = try await second.withScope { try await ScopedValues.current.service(AppClockKey.self) }
        let again = try await first.withScope { try await ScopedValues.current.service(AppClockKey.self) }
        #expect(a !== b)
        #expect(a === again)
    }

    @Test func scopeServiceIsBuiltOncePerScopeAndSharedByConcurrentReaders() async throws {
        let (root, probe) = makeRoot()
        for _ in 0..<2 {
            try await root.withScope({ $0.serviceLabel = "request" }) {
                let identities = try await withThrowingTaskGroup(of: ObjectIdentifier.self) { group in
                    for _ in 0..<100 {
                        group.addTask { ObjectIdentifier(try await ScopedValues.current.service(SessionKey.self)) }
                    }
                    return try await group.reduce(into: Set()) { $0.insert($1) }
                }
                #expect(identities.count == 1)
                #expect(try await ScopedValues.current.service(SessionKey.self).label == "request")
            }
        }
        #expect(probe.builds(of: "session") == 2)
        #expect(probe.openCount == 0)
    }

    @Test func servicesCloseInReverseOrderOfConstructionWhenTheScopeSucceeds() async throws {
        let (root, probe) = makeRoot()
        try await root.withScope {
            _ = try await ScopedValues.current.service(SessionKey.self)
            _ = try await ScopedValues.current.service(SecondResourceKey.self)
        }
        #expect(
            probe.events == [
                "build session", "build firstResource", "build secondResource",
                "close secondResource success", "close firstResource success", "close session success",
            ]
        )
    }

    @Test func throwingOperationClosesEveryServiceWithFailureAndRethrows() async throws {
        struct HandlerFailure: Error {}
        let (root, probe) = makeRoot()
        await #expect(throws: HandlerFailure.self) {
            try await root.withScope {
                _ = try await ScopedValues.current.service(SessionKey.self)
                _ = try await ScopedValues.current.service(FirstResourceKey.self)
                throw HandlerFailure()
            }
        }
        #expect(probe.events.suffix(2) == ["close firstResource failure", "close session failure"])
        #expect(probe.openCount == 0)
    }

    @Test func cancelledOperationClosesEveryServiceAsCancelled() async throws {
        let (root, probe) = makeRoot()
        let started = AsyncStream.makeStream(of: Void.self)
        let task = Task {
            try await root.withScope {
                _ = try await ScopedValues.current.service(SessionKey.self)
                started.continuation.yield()
                try await Task.sleep(for: .seconds(30))
            }
        }
        for await _ in started.stream { break }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(probe.events == ["build session", "close session cancelled"])
        #expect(root.openScopeCount == 0)
    }

    @Test func closeErrorNeverMasksTheOperationsErrorNorSkipsOtherCloses() async throws {
        struct HandlerFailure: Error {}
        let reported = Mutex<[String]>([])
        let (root, probe) = makeRoot(onCloseError: { error in
            reported.withLock { $0 += error.failures.map(\.entry) }
        })
        await #expect(throws: HandlerFailure.self) {
            try await root.withScope {
                _ = try await ScopedValues.current.service(SessionKey.self)
                _ = try await ScopedValues.current.service(FailingCloseKey.self)
                throw HandlerFailure()
            }
        }
        #expect(probe.events.suffix(2) == ["close failingClose failure", "close session failure"])
        #expect(reported.withLock { $0 } == ["failingClose"])
    }

    @Test func closeErrorAfterSuccessIsThrownSoTheCallerNeverReportsSuccess() async throws {
        let (root, probe) = makeRoot()
        let error = try await #require(throws: ScopeCloseError.self) {
            try await root.withScope {
                _ = try await ScopedValues.current.service(FailingCloseKey.self)
                _ = try await ScopedValues.current.service(SessionKey.self)
            }
        }
        #expect(error.failures.map(\.entry) == ["failingClose"])
        #expect(error.failures.first?.error as? CloseFailure == CloseFailure(name: "failingClose"))
        #expect(probe.events.suffix(2) == ["close session success", "close failingClose success"])
    }

    @Test func captiveDependencyIsRefusedWithTheChain() async throws {
        let (root, _) = makeRoot()
        let error = try await #require(throws: ScopedError.self) {
            try await root.withScope { _ = try await ScopedValues.current.service(CaptiveRepositoryKey.self) }
        }
        #expect(error == .captiveDependency(chain: ["captiveRepository (app)", "session (scope)"]))
        #expect(error.description.contains("captiveRepository (app) → session (scope)"))
    }

    @Test func cycleIsRefusedWithTheChain() async throws {
        let (root, _) = makeRoot()
        let error = try await #require(throws: ScopedError.self) {
            try await root.withScope { _ = try await ScopedValues.current.service(CycleAKey.self) }
        }
        #expect(error == .cycle(chain: ["cycleA (app)", "cycleB (app)", "cycleA (app)"]))
    }

    /// The chain lists every construction the task is inside, outermost first, however deep,
    /// and a failed construction leaves nothing behind: the scope can build something else.
    @Test func cycleThreeConstructionsDeepIsRefusedWithTheWholeChain() async throws {
        let (root, _) = makeRoot()
        try await root.withScope {
            let error = await #expect(throws: ScopedError.self) {
                try await ScopedValues.current.service(RingFirstKey.self)
            }
            #expect(
                error
                    == .cycle(chain: [
                        "ringFirst (scope)", "ringSecond (scope)", "ringThird (scope)", "ringFirst (scope)",
                    ])
            )
            let context = try #require(ScopedValues.current.scope)
            for key in [RingFirstKey.self, RingSecondKey.self, RingThirdKey.self] as [any ScopedServiceKey.Type] {
                #expect(!context.isBuilt(ObjectIdentifier(key)) && context.waiterCount(for: ObjectIdentifier(key)) == 0)
            }
            _ = try await ScopedValues.current.service(SessionKey.self)
        }
    }

    /// Each task builds one service and waits for the other's: without detection neither would ever finish.
    ///
    /// The second to wait sees the cycle; the first gets its error through the construction it waited for.
    @Test func cycleAcrossTasksIsRefusedInsteadOfDeadlocking() async throws {
        let root = ScopeRoot { $0.barrier = Barrier(parties: 2) }
        @Sendable func error<K: ScopedServiceKey>(reading key: K.Type) async -> ScopedError? {
            do {
                _ = try await root.withScope { try await ScopedValues.current.service(key) }
                return nil
            } catch {
                return error as? ScopedError
            }
        }
        // Unstructured tasks and a deadline, so that a deadlock fails the test instead of hanging it.
        final class Finished: Sendable { let errors = Mutex<[ScopedError?]>([]) }
        let finished = Finished()
        Task {
            let result = await error(reading: CrossTaskCycleAKey.self)
            finished.errors.withLock { $0.append(result) }
        }
        Task {
            let result = await error(reading: CrossTaskCycleBKey.self)
            finished.errors.withLock { $0.append(result) }
        }
        // Generous: beside a build, the two tasks waited more than 10 s for a cooperative thread.
        let deadline = ContinuousClock.now + .seconds(60)
        while finished.errors.withLock({ $0.count }) < 2 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        let errors = finished.errors.withLock { $0 }
        try #require(errors.count == 2, "the two constructions deadlocked")
        let cycles = [
            ScopedError.cycle(chain: ["crossTaskCycleA (app)", "crossTaskCycleB (app)", "crossTaskCycleA (app)"]),
            ScopedError.cycle(chain: ["crossTaskCycleB (app)", "crossTaskCycleA (app)", "crossTaskCycleB (app)"]),
        ]
        #expect(errors[0] == errors[1])
        #expect(errors[0].map(cycles.contains) == true)
        // Nothing stays half-built: a later read fails the same way instead of hanging.
        #expect(await error(reading: CrossTaskCycleAKey.self) != nil)
        await root.shutdown()
    }

    @Test func concurrentConstructionsSharingADependencyAreNotACycle() async throws {
        let probe = LifetimeProbe()
        let root = ScopeRoot {
            $0.barrier = Barrier(parties: 2)
            $0.probe = probe
        }
        async let left = root.withScope { try await ScopedValues.current.service(DiamondLeftKey.self) }
        async let right = root.withScope { try await ScopedValues.current.service(DiamondRightKey.self) }
        let (l, r) = try await (left, right)
        #expect(l.name == "diamondShared" && r.name == "diamondShared")
        #expect(probe.builds(of: "diamondShared") == 1)
        await root.shutdown()
    }

    @Test func aRegisteredAppServiceIsBuiltOnceReadByEveryScopeAndRefusedAfterShutdown() async throws {
        let probe = LifetimeProbe()
        let root = ScopeRoot(services: [AppClockKey.self]) { $0.probe = probe }
        let read: @Sendable () async throws -> Resource = {
            try await root.withScope { try await ScopedValues.current.service(AppClockKey.self) }
        }
        let first = try await read()
        // Concurrent readers of the built service: the same instance, no second build.
        try await withThrowingTaskGroup { group in
            for _ in 0..<200 {
                group.addTask {
                    let again = try await read()
                    #expect(again === first)
                }
            }
            try await group.waitForAll()
        }
        #expect(probe.builds(of: AppClockKey.name) == 1)
        await root.shutdown()
        #expect(probe.events.filter { $0.hasPrefix("close") } == ["close \(AppClockKey.name) success"])
        // Published once built, but never handed out once the root has closed it.
        await #expect(throws: ScopedError.scopeEnded(entry: AppClockKey.name)) { _ = try await read() }
    }

    /// On the root's own values (a job running on the root), no request scope owns a scope
    /// service. (Outside every root, `OutsideRootTests`.)
    @Test func scopeServiceReadOnTheRootOutsideAnyScopeIsAnError() async throws {
        let (root, _) = makeRoot()
        let error = try await #require(throws: ScopedError.self) {
            try await withScopedValues(root.values) { _ = try await ScopedValues.current.service(SessionKey.self) }
        }
        #expect(error == .outsideScope(entry: "session"))
        await root.shutdown()
    }

    @Test func failedConstructionIsSharedByConcurrentReadersAndRetriedLater() async throws {
        let (root, probe) = makeRoot()
        try await root.withScope({ $0.expectedWaiters = 19 }) {
            let failures = await withTaskGroup(of: Bool.self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        do {
                            _ = try await ScopedValues.current.service(BrokenKey.self)
                            return false
                        } catch {
                            return error is ConstructionFailure
                        }
                    }
                }
                return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(failures == 20)
            #expect(probe.builds(of: "broken") == 1)
            await #expect(throws: ConstructionFailure.self) { try await ScopedValues.current.service(BrokenKey.self) }
            #expect(probe.builds(of: "broken") == 2)
        }
    }

    @Test func aConstructionThatFinishesAfterItsScopeClosedIsClosedAndItsCloseFailureReported() async throws {
        let probe = LifetimeProbe()
        let reported = Recorder<ScopeCloseError>()
        let gate = (started: Signal(), release: Signal())
        let root = ScopeRoot(onCloseError: { reported.record($0) }) { $0.probe = probe }
        var late: Task<Resource, any Error>?
        try await root.withScope({ $0.constructionGate = gate }) {
            late = Task { try await ScopedValues.current.service(LateResourceKey.self) }
            await gate.started.wait()
        }
        gate.release.fire()
        await #expect(throws: ScopedError.scopeEnded(entry: LateResourceKey.name)) { try await late?.value }
        #expect(probe.events == ["close \(LateResourceKey.name) cancelled"])
        let failures = reported.all.flatMap(\.failures)
        #expect(failures.map(\.entry) == [LateResourceKey.name])
        #expect(failures.first?.error is CloseFailure)
        #expect(reported.all.first.map { "\($0.outcome)" } == "cancelled")
    }

    @Test func readersWaitingForAConstructionWhenItsScopeClosesGetScopeEndedInsteadOfHanging() async throws {
        let gate = (started: Signal(), release: Signal())
        let root = ScopeRoot { $0.probe = LifetimeProbe() }
        var builder: Task<Resource, any Error>?
        var waiter: Task<Resource, any Error>?
        try await root.withScope({ $0.constructionGate = gate }) {
            builder = Task { try await ScopedValues.current.service(LateResourceKey.self) }
            await gate.started.wait()
            waiter = Task { try await ScopedValues.current.service(LateResourceKey.self) }
            // Let the second reader register as a waiter before the scope ends.
            while let scope = ScopedValues.current.scope,
                scope.waiterCount(for: ObjectIdentifier(LateResourceKey.self)) == 0
            {
                await Task.yield()
            }
        }
        gate.release.fire()
        await #expect(throws: ScopedError.scopeEnded(entry: LateResourceKey.name)) { try await builder?.value }
        await #expect(throws: ScopedError.scopeEnded(entry: LateResourceKey.name)) { try await waiter?.value }
    }

    @Test func aServiceReadAfterItsScopeClosedIsRefusedNotServedStale() async throws {
        let (root, probe) = makeRoot()
        let captured = try await root.withScope {
            _ = try await ScopedValues.current.service(SessionKey.self)
            return ScopedValues.current
        }
        #expect(probe.builds(of: SessionKey.name) == 1)
        await #expect(throws: ScopedError.scopeEnded(entry: SessionKey.name)) {
            try await withScopedValues(captured) { try await ScopedValues.current.service(SessionKey.self) }
        }
        #expect(probe.builds(of: SessionKey.name) == 1)
    }

    @Test func providedServiceInstanceIsUsedAndNeverClosed() async throws {
        let (root, probe) = makeRoot()
        let provided = Resource(name: "provided", label: "test")
        let read = try await root.withScope({ $0.set(SessionKey.self, to: provided) }) {
            try await ScopedValues.current.service(SessionKey.self)
        }
        #expect(read === provided)
        #expect(probe.events.isEmpty)
    }

    @Test func aServiceProvidedAboveIsFoundThroughEveryLevelAndOneProvidedBelowWins() async throws {
        let (root, probe) = makeRoot()
        let above = Resource(name: "above", label: "test")
        let below = Resource(name: "below", label: "test")
        let (found, overridden) = try await root.withScope({ $0.set(SessionKey.self, to: above) }) {
            // Through overlays that set other entries, two levels down.
            try await withScopedValues({ $0.copyright = "child" }) {
                try await withScopedValues({ $0.copyright = "grandchild" }) {
                    let found = try await ScopedValues.current.service(SessionKey.self)
                    let overridden = try await withScopedValues({ $0.set(SessionKey.self, to: below) }) {
                        try await ScopedValues.current.service(SessionKey.self)
                    }
                    return (found, overridden)
                }
            }
        }
        #expect(found === above)
        #expect(overridden === below)
        // Provided on the root itself: in the base table, under every request's overlay.
        let providingRoot = ScopeRoot { $0.set(SessionKey.self, to: above) }
        let fromBase = try await providingRoot.withScope({ $0.copyright = "request" }) {
            try await ScopedValues.current.service(SessionKey.self)
        }
        #expect(fromBase === above)
        #expect(probe.events.isEmpty)
    }

    @Test func nestedScopeOwnsWhatItBuildsAndClosesItFirst() async throws {
        let (root, probe) = makeRoot()
        try await root.withScope {
            let outer = try await ScopedValues.current.service(SessionKey.self)
            try await withScope {
                let inner = try await ScopedValues.current.service(SessionKey.self)
                #expect(inner !== outer)
            }
            #expect(probe.events == ["build session", "build session", "close session success"])
        }
        #expect(probe.openCount == 0)
    }

    @Test func tenThousandConcurrentScopesNeverSeeEachOthersValuesAndLeaveNothingOpen() async throws {
        let (root, probe) = makeRoot()
        let mismatches = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<10_000 {
                group.addTask {
                    try await root.withScope({ $0.serviceLabel = "request-\(index)" }) {
                        await Task.yield()
                        let session = try await ScopedValues.current.service(SessionKey.self)
                        let read = ScopedValues.current.serviceLabel
                        return session.label == "request-\(index)" && read == "request-\(index)" ? 0 : 1
                    }
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(mismatches == 0)
        #expect(probe.builds(of: "session") == 10_000)
        #expect(probe.openCount == 0)
        #expect(root.openScopeCount == 0)
    }

    @Test func shutdownWaitsForOpenScopesThenClosesAppServicesNewestFirst() async throws {
        let (root, probe) = makeRoot()
        let release = AsyncStream.makeStream(of: Void.self)
        let opened = AsyncStream.makeStream(of: Void.self)
        let request = Task {
            try await root.withScope {
                _ = try await ScopedValues.current.service(AppClockKey.self)
                _ = try await ScopedValues.current.service(SlowAppKey.self)
                opened.continuation.yield()
                for await _ in release.stream { break }
            }
        }
        for await _ in opened.stream { break }
        let shutdown = Task { await root.shutdown() }
        try await Task.sleep(for: .milliseconds(50))
        #expect(!probe.events.contains { $0.hasPrefix("close") }, "app services stay open while a scope is open")
        release.continuation.yield()
        try await request.value
        await shutdown.value
        #expect(probe.events.suffix(2) == ["close slowApp success", "close appClock success"])
    }
}
