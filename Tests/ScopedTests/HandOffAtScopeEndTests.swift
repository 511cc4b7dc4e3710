import Logging
@testable import Scoped
import ScopedTestSupport
import Testing

/// Work handed off to start after its scope's commit, or after its rollback.
struct HandOffAtScopeEndTests {
    /// Records, in order, what the scope's services and the work did.
    private static func workRecording(_ order: Recorder<String>, _ name: String) -> @Sendable () async throws -> Void {
        {
            // What the scope's services had done when the work started, then its own session.
            let before = ScopedValues.current.probe?.events.last ?? ""
            let session = try await ScopedValues.current.service(SessionKey.self)
            order.record("\(name) ran with \(session.label), after \(before)")
        }
    }

    @Test func afterCommitWorkStartsOnlyOnceTheScopesServicesClosedWithSuccess() async throws {
        let (root, probe) = makeRoot()
        let order = Recorder<String>()
        let work = try await root.withScope({ $0.serviceLabel = "request" }) {
            _ = try await ScopedValues.current.service(SessionKey.self)
            let work = handOff(.afterCommit, timeout: .seconds(30), operation: Self.workRecording(order, "work"))
            // Handed off, counted open, but not started while the scope runs.
            for _ in 0..<100 { await Task.yield() }
            order.record("scope returning")
            #expect(root.openScopeCount == 2)
            return work
        }
        try await work.value
        // The request's session committed before the work's own session was built.
        #expect(order.all == ["scope returning", "work ran with request, after close \(SessionKey.name) success"])
        #expect(probe.events.suffix(2) == ["build \(SessionKey.name)", "close \(SessionKey.name) success"])
        #expect(probe.builds(of: SessionKey.name) == 2)
        #expect(root.openScopeCount == 0)
        #expect(root.handOffsNotStarted == 0)
    }

    @Test func aScopeThatThrowsStartsItsAfterRollbackWorkAndNeverItsAfterCommitWork() async throws {
        let (root, probe) = makeRoot()
        let order = Recorder<String>()
        let logs = LogCapture()
        let works = Recorder<HandedOffWork>()
        await withLogger(logs.logger(label: "request")) { _ in
            await #expect(throws: CloseFailure(name: "handler")) {
                try await root.withScope {
                    _ = try await ScopedValues.current.service(SessionKey.self)
                    works.record(
                        handOff(.afterCommit, timeout: .seconds(30), operation: Self.workRecording(order, "mail"))
                    )
                    works.record(
                        handOff(.afterRollback, timeout: .seconds(30), operation: Self.workRecording(order, "undo"))
                    )
                    throw CloseFailure(name: "handler")
                }
            }
        }
        let (afterCommit, afterRollback) = (works.all[0], works.all[1])
        let notStarted = try #require(await Self.notStarted(afterCommit))
        #expect(notStarted.reason == .rolledBack)
        try await afterRollback.value
        #expect(order.all == ["undo ran with root, after close \(SessionKey.name) failure"])
        #expect(root.handOffsNotStarted == 1)
        #expect(root.openScopeCount == 0)
        // Logged where the request's logs go, naming the site and the outcome.
        let warning = try #require(logs.lines.first { $0.level == .warning })
        #expect(warning.metadata["handoff.site"] == "\(notStarted.site)")
        #expect(warning.message.contains("failure(CloseFailure(name: \"handler\"))"))
        #expect(probe.builds(of: SessionKey.name) == 2)  // the request's, the undo's; never the mail's
    }

    @Test func aCommitThatFailsIsARollback() async throws {
        let (root, _) = makeRoot()
        let order = Recorder<String>()
        let works = Recorder<HandedOffWork>()
        // The scope returns; its session's close (its commit) throws.
        await #expect(throws: ScopeCloseError.self) {
            try await root.withScope {
                _ = try await ScopedValues.current.service(FailingCloseKey.self)
                works.record(handOff(.afterCommit, timeout: .seconds(30)) { order.record("mail") })
                works.record(handOff(.afterRollback, timeout: .seconds(30)) { order.record("undo") })
            }
        }
        #expect(await Self.notStarted(works.all[0])?.reason == .rolledBack)
        try await works.all[1].value
        #expect(order.all == ["undo"])
        #expect(root.handOffsNotStarted == 1)
    }

    @Test func workThatThrowsAfterTheCommitIsLoggedWithItsSiteAndCountedAndTheScopeStillSucceeds() async throws {
        let (root, probe) = makeRoot()
        let logs = LogCapture()
        struct Unreachable: Error {}
        let (answer, work) = try await withLogger(logs.logger(label: "request")) { _ in
            try await root.withScope {
                _ = try await ScopedValues.current.service(SessionKey.self)
                let work = handOff(.afterCommit, timeout: .seconds(30)) {
                    _ = try await ScopedValues.current.service(SessionKey.self)
                    throw Unreachable()
                }
                return ("answered", work)
            }
        }
        #expect(answer == "answered")  // the scope returned and committed
        await #expect(throws: Unreachable.self) { try await work.value }
        #expect(root.handOffsFailed == 1)
        #expect(root.handOffsNotStarted == 0)
        #expect(
            probe.events == [
                "build \(SessionKey.name)", "close \(SessionKey.name) success",
                "build \(SessionKey.name)", "close \(SessionKey.name) failure",
            ]
        )
        let warning = try #require(logs.lines.first { $0.level == .warning })
        #expect(warning.message.contains("failed: Unreachable()"))
        #expect(
            warning.metadata["handoff.site"]?.description.hasPrefix("ScopedTests/HandOffAtScopeEndTests.swift:") == true
        )
    }

    @Test func aScopeThatCommitsEndsItsAfterRollbackWorkUnstartedAndUncounted() async throws {
        let (root, _) = makeRoot()
        let ran = Recorder<String>()
        let work = try await root.withScope {
            handOff(.afterRollback, timeout: .seconds(30)) { ran.record("undo") }
        }
        #expect(await Self.notStarted(work)?.reason == .committed)
        #expect(ran.all.isEmpty)
        #expect(root.handOffsNotStarted == 0)
        #expect(root.openScopeCount == 0)
    }

    @Test func workCancelledWhileItWaitsNeverStarts() async throws {
        let (root, _) = makeRoot()
        let ran = Recorder<String>()
        let work = try await root.withScope {
            let work = handOff(.afterCommit, timeout: .seconds(30)) { ran.record("mail") }
            work.cancel()
            return work
        }
        #expect(await Self.notStarted(work)?.reason == .cancelled)
        #expect(ran.all.isEmpty)
        #expect(root.openScopeCount == 0)
    }

    @Test func withNoScopeToWaitForTheWorkIsRefusedNeverRunAtOnce() async throws {
        let (root, _) = makeRoot()
        let ran = Recorder<String>()
        // In the root's own values: no unit of work whose commit it could wait for.
        let atRoot = ScopedValues.taskLocalNode.withValue(root.values.node) {
            handOff(.afterCommit, timeout: .seconds(30)) { ran.record("root") }
        }
        #expect(await Self.notStarted(atRoot)?.reason == .noScope)
        let outside = handOff(.afterCommit, timeout: .seconds(30)) { ran.record("outside") }
        await #expect(throws: ScopedError.outsideRoot(entry: nil)) { try await outside.value }
        #expect(ran.all.isEmpty)
        #expect(root.openScopeCount == 0)
    }

    @Test func workHandedOffInHandedOffWorkWaitsForThatWorksOwnCommit() async throws {
        let (root, probe) = makeRoot()
        let order = Recorder<String>()
        let inner = Recorder<HandedOffWork>()
        let job = try await root.withScope {
            handOff(timeout: .seconds(30)) {
                _ = try await ScopedValues.current.service(SessionKey.self)
                inner.record(
                    handOff(.afterCommit, timeout: .seconds(30), operation: Self.workRecording(order, "after job"))
                )
                for _ in 0..<100 { await Task.yield() }
                order.record("job returning")
            }
        }
        try await job.value
        try await inner.all[0].value
        #expect(order.all == ["job returning", "after job ran with root, after close \(SessionKey.name) success"])
        #expect(probe.builds(of: SessionKey.name) == 2)
        #expect(root.openScopeCount == 0)
    }

    @Test func aScopeOpenedByHandClosedWithFailureEndsItsAfterCommitWorkUnstarted() async throws {
        let (root, _) = makeRoot()
        let ran = Recorder<String>()
        let scope = root.openScope()
        let work = await scope.run { handOff(.afterCommit, timeout: .seconds(30)) { ran.record("mail") } }
        // A scope released unclosed ends as cancelled: the same rule.
        try await scope.close(.cancelled)
        #expect(await Self.notStarted(work)?.reason == .rolledBack)
        #expect(ran.all.isEmpty)
        #expect(root.handOffsNotStarted == 1)
    }

    @Test func theTimeoutCountsFromTheWorksStartNotFromItsHandOff() async throws {
        let (root, _) = makeRoot()
        let clock = ContinuousClock()
        let timeout = Duration.milliseconds(200)
        let started = Recorder<ContinuousClock.Instant>()
        let handedOffAt = clock.now
        let slow = try await root.withScope {
            let slow = handOff(.afterCommit, timeout: timeout) {
                started.record(clock.now)
                try await Task.sleep(for: .seconds(60))
            }
            // The scope outlives the timeout: counted from the hand-off, it would pass first.
            try await Task.sleep(for: timeout * 3)
            return slow
        }
        await #expect(throws: ScopedError.timedOut(after: timeout)) { try await slow.value }
        let ended = clock.now
        let start = try #require(started.all.first)
        #expect(start - handedOffAt >= timeout * 3)  // it started once the scope had committed
        #expect(ended - start >= timeout)  // and had its whole timeout from then
        #expect(root.openScopeCount == 0)
    }

    // Bounded: a shutdown that waited for a commit that cannot come would hang the suite.
    @Test(.timeLimit(.minutes(1)))
    func shutdownWaitsForAfterCommitWorkWhoseRequestHasNotCommittedYet() async throws {
        let (root, probe) = makeRoot()
        let release = Signal()
        let handedOff = Signal()
        let order = Recorder<String>()
        let request = Task {
            try await root.withScope {
                handOff(.afterCommit, timeout: .seconds(30)) {
                    _ = try await ScopedValues.current.service(AppClockKey.self)
                    order.record("work ran")
                }
                handedOff.fire()
                await release.wait()
                order.record("request committing")
            }
        }
        await handedOff.wait()
        let shutdown = Task {
            await root.shutdown()
            order.record("shutdown returned")
        }
        for _ in 0..<100 { await Task.yield() }
        #expect(order.all.isEmpty)
        release.fire()
        try await request.value
        await shutdown.value
        #expect(order.all == ["request committing", "work ran", "shutdown returned"])
        #expect(probe.events.last == "close \(AppClockKey.name) success")
    }

    @Test func aShutdownBoundAbandonsWorkWhoseRequestNeverEnds() async throws {
        let (root, _) = makeRoot()
        let never = Signal()
        let handedOff = Signal()
        let request = Task {
            try await root.withScope {
                handOff(.afterCommit, timeout: .seconds(30)) {}
                handedOff.fire()
                await never.wait()
            }
        }
        await handedOff.wait()
        // The request and the work waiting for it are the two scopes left open.
        #expect(await root.shutdown(abandoningAfter: .milliseconds(100)) == false)
        #expect(root.openScopeCount == 2)
        never.fire()
        try await request.value
        _ = try await eventually { root.openScopeCount == 0 }
    }

    /// Why `work` did not start, its site checked to be in this file; `nil` if it ran.
    private static func notStarted(_ work: HandedOffWork) async -> HandedOffWork.NotStarted? {
        do {
            try await work.value
            return nil
        } catch let error as HandedOffWork.NotStarted {
            #expect(error.site.fileID == "ScopedTests/HandOffAtScopeEndTests.swift" && error.site.line > 0)
            return error
        } catch {
            Issue.record("expected NotStarted, got \(error)")
            return nil
        }
    }
}
