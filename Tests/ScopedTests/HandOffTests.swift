@testable import Scoped
import ScopedTestSupport
import Testing

/// Work handed off past the end of the scope that started it.
struct HandOffTests {
    @Test func handedOffWorkOutlivesItsScopeInAScopeOfItsOwnThatCommitsWhenItEnds() async throws {
        let (root, probe) = makeRoot()
        let release = Signal()
        let labels = Recorder<String>()
        let (handedOff, plain) = try await root.withScope({ $0.serviceLabel = "request" }) {
            _ = try await ScopedValues.current.service(SessionKey.self)
            let handedOff = handOff(timeout: .seconds(30)) {
                await release.wait()
                labels.record(try await ScopedValues.current.service(SessionKey.self).label)
            }
            let plain = Task {
                await release.wait()
                return try await ScopedValues.current.service(SessionKey.self)
            }
            return (handedOff, plain)
        }
        // The request's scope closed and committed; the handed-off work keeps its own open.
        #expect(probe.events == ["build \(SessionKey.name)", "close \(SessionKey.name) success"])
        #expect(root.openScopeCount == 1)

        release.fire()
        try await handedOff.value
        #expect(labels.all == ["request"])  // the request's values, its own session
        #expect(probe.builds(of: SessionKey.name) == 2)
        #expect(probe.events.last == "close \(SessionKey.name) success")
        #expect(root.openScopeCount == 0)
        // Work that did not take this path is refused, never served a stale or default value.
        await #expect(throws: ScopedError.scopeEnded(entry: SessionKey.name)) { try await plain.value }
    }

    @Test func handedOffWorkThatThrowsRollsBackItsOwnScopeOnly() async throws {
        let (root, probe) = makeRoot()
        let task = try await root.withScope {
            handOff(timeout: .seconds(30)) {
                _ = try await ScopedValues.current.service(SessionKey.self)
                throw CloseFailure(name: "work")
            }
        }
        await #expect(throws: CloseFailure(name: "work")) { try await task.value }
        #expect(probe.events == ["build \(SessionKey.name)", "close \(SessionKey.name) failure"])
        #expect(root.openScopeCount == 0)
    }

    // A waiter that is never resumed would hang the suite: bounded.
    @Test(.timeLimit(.minutes(1)))
    func everyTaskThatAwaitsHandedOffWorkLearnsHowItEndedOnceItsScopeHasClosed() async throws {
        let (root, probe) = makeRoot()
        let release = Signal()
        let work = try await root.withScope {
            handOff(timeout: .seconds(30)) {
                _ = try await ScopedValues.current.service(SessionKey.self)
                await release.wait()
                throw CloseFailure(name: "work")
            }
        }
        // Three waiters, two before the work ends and one after.
        let early = (0..<2)
            .map { _ in
                Task { () -> String in
                    do {
                        try await work.value
                        return "returned"
                    } catch {
                        return "\(error) after \(probe.events.last ?? "")"
                    }
                }
            }
        for _ in 0..<100 { await Task.yield() }
        release.fire()
        let expected = "\(CloseFailure(name: "work")) after close \(SessionKey.name) failure"
        for waiter in early { #expect(await waiter.value == expected) }
        await #expect(throws: CloseFailure(name: "work")) { try await work.value }
        #expect(root.openScopeCount == 0)
    }

    @Test func handedOffWorkPastItsTimeoutIsCancelledAndItsScopeClosesAsCancelled() async throws {
        let (root, probe) = makeRoot()
        let cancelled = Signal()
        let release = Signal()
        let lateRead = Recorder<String>()
        let task = try await root.withScope {
            handOff(timeout: .milliseconds(50)) {
                _ = try await ScopedValues.current.service(SessionKey.self)
                // Ignores its cancellation: the deadline must not wait for it.
                await withTaskCancellationHandler {
                    await release.wait()
                } onCancel: {
                    cancelled.fire()
                }
                do {
                    _ = try await ScopedValues.current.service(SessionKey.self)
                    lateRead.record("served")
                } catch {
                    lateRead.record("\(error)")
                }
                release.fire()
            }
        }
        await #expect(throws: ScopedError.timedOut(after: .milliseconds(50))) { try await task.value }
        #expect(cancelled.hasFired)
        #expect(probe.events == ["build \(SessionKey.name)", "close \(SessionKey.name) cancelled"])
        #expect(root.openScopeCount == 0)
        await root.shutdown()  // not held by the work still running

        // The work, still running after its deadline, is refused its closed scope's services.
        let done = Signal()
        Task {
            release.fire()
            while lateRead.all.isEmpty { await Task.yield() }
            done.fire()
        }
        await done.wait()
        #expect(lateRead.all == ["\(ScopedError.scopeEnded(entry: SessionKey.name))"])
    }

    @Test func shutdownWaitsForHandedOffWorkBeforeClosingAppServices() async throws {
        let (root, probe) = makeRoot()
        let started = Signal()
        let release = Signal()
        let order = Recorder<String>()
        _ = try await root.withScope {
            _ = try await ScopedValues.current.service(AppClockKey.self)
            handOff(timeout: .seconds(30)) {
                started.fire()
                await release.wait()
                _ = try await ScopedValues.current.service(AppClockKey.self)
                order.record("work ended")
            }
        }
        await started.wait()
        let shutdown = Task {
            await root.shutdown()
            order.record("shutdown returned")
        }
        // Shutdown is waiting: the app service is still open while the work runs.
        for _ in 0..<100 { await Task.yield() }
        #expect(order.all.isEmpty)
        #expect(probe.openCount == 1)

        release.fire()
        await shutdown.value
        #expect(order.all == ["work ended", "shutdown returned"])
        #expect(probe.events.last == "close \(AppClockKey.name) success")
    }
}
