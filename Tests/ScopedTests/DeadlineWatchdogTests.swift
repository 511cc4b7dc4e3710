import Dispatch
@testable import Scoped
import ScopedTestSupport
import Testing

/// The one structure every deadline of the library is an entry in.
struct DeadlineWatchdogTests {
    private let watchdog = DeadlineWatchdog.shared

    /// The timer exists from the first deadline until the grace after the last: none before,
    /// one while work has a deadline (reused by a deadline registered within the grace), and
    /// none once the grace has passed with nothing registered.
    @Test func theTimerLivesFromTheFirstDeadlineUntilTheGraceAfterTheLast() async throws {
        let watchdog = DeadlineWatchdog(tick: .milliseconds(10), idleGrace: .seconds(2))
        #expect(!watchdog.hasTimer)
        let first = watchdog.register(after: .seconds(30)) {}
        #expect(watchdog.hasTimer)
        let cancelled = ContinuousClock.now
        #expect(watchdog.cancel(first))
        try await Task.sleep(for: .milliseconds(50))
        // Within the grace, when the machine let the sleep end within it (beside a release build
        // on 2 cores, a 50 ms sleep has taken over 2 s).
        if ContinuousClock.now - cancelled < .seconds(1) { #expect(watchdog.hasTimer) }
        let fired = Signal()
        _ = watchdog.register(after: .milliseconds(20)) { fired.fire() }
        await fired.wait()
        #expect(await eventually(within: .seconds(10)) { !watchdog.hasTimer })
        // A deadline after the timer was cancelled makes a new one, and it fires.
        let firedAgain = Signal()
        _ = watchdog.register(after: .milliseconds(20)) { firedAgain.fire() }
        #expect(watchdog.hasTimer)
        await firedAgain.wait()
        #expect(await eventually(within: .seconds(10)) { !watchdog.hasTimer })
    }

    @Test func aDeadlineExpiresOnceAndCannotBeCancelledAfter() async throws {
        let expired = Recorder<String>()
        let fired = Signal()
        let deadline = watchdog.register(after: .milliseconds(50)) {
            expired.record("expired")
            fired.fire()
        }
        await fired.wait()
        #expect(!watchdog.cancel(deadline))
        try await Task.sleep(for: .milliseconds(100))
        #expect(expired.all == ["expired"])
    }

    @Test func aCancelledDeadlineNeverExpires() async throws {
        let expired = Recorder<String>()
        let deadline = watchdog.register(after: .milliseconds(50)) { expired.record("expired") }
        #expect(watchdog.cancel(deadline))
        #expect(!watchdog.cancel(deadline))
        try await Task.sleep(for: .milliseconds(200))
        #expect(expired.all.isEmpty)
    }

    @Test func aTimeoutOfZeroOrLessExpiresAtTheNextTick() async {
        let fired = Signal()
        _ = watchdog.register(after: .seconds(-1)) { fired.fire() }
        await fired.wait()
        #expect(fired.hasFired)
    }

    /// A timeout longer than a count of nanoseconds can hold (a configuration's "never", say)
    /// never expires, and registering it does not trap: the deadline adding it to the clock's
    /// reading overflowed before session 35.
    @Test func aTimeoutTooLongToCountNeverExpires() async throws {
        let expired = Recorder<String>()
        let far = watchdog.register(after: .seconds(Int64.max)) { expired.record("far") }
        let fired = Signal()
        _ = watchdog.register(after: .milliseconds(60)) { fired.fire() }
        await fired.wait()
        try await Task.sleep(for: watchdog.tick * 3)
        #expect(expired.all.isEmpty)
        #expect(watchdog.cancel(far))
    }

    /// A deadline fires while every thread of Swift's cooperative pool is blocked.
    ///
    /// The case deadlines exist for: the threads blocked (in a statement, say) until the deadline
    /// ends the wait. Each blocked task gives up after 10 s,
    /// so a watchdog that needs a cooperative thread fails the test instead of hanging it.
    @Test func aDeadlineFiresWhileEveryCooperativeThreadIsBlocked() async {
        let blocked = 8  // more than this machine's cooperative threads
        let release = DispatchSemaphore(value: 0)
        _ = watchdog.register(after: .milliseconds(100)) {
            for _ in 0..<blocked { release.signal() }
        }
        let released = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<blocked {
                group.addTask { release.wait(timeout: .now() + .seconds(10)) == .success }
            }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(released == blocked)
    }

    /// Fifty thousand far deadlines, registered and then cancelled, do not hold back a near one:
    /// a wake-up visits the ticks that passed, not every deadline.
    @Test func aNearDeadlineExpiresInOrderAmongManyFarOnes() async throws {
        let order = Recorder<String>()
        let far = (0..<50_000).map { _ in watchdog.register(after: .seconds(600)) { order.record("far") } }
        let fired = Signal()
        _ = watchdog.register(after: .milliseconds(100)) {
            order.record("near")
            fired.fire()
        }
        await fired.wait()
        #expect(far.allSatisfy { watchdog.cancel($0) })
        #expect(order.all == ["near"])
    }

    /// A deadline several turns of the wheel away expires on its own tick, not on an earlier
    /// visit of its slot; and a deadline that a visit moved in its slot (the cancelled one put
    /// before it was dropped) is still found by its cancel.
    @Test func aDeadlineTurnsOfTheWheelAwayExpiresOnItsTickAndIsFoundWhenMoved() async throws {
        let watchdog = DeadlineWatchdog(tick: .milliseconds(10), slots: 4)
        let expired = Recorder<String>()
        let dropped = watchdog.register(after: .seconds(60)) { expired.record("dropped") }
        let moved = watchdog.register(after: .seconds(60)) { expired.record("moved") }
        #expect(watchdog.cancel(dropped))
        let registered = ContinuousClock.now
        let fired = Signal()
        _ = watchdog.register(after: .milliseconds(300)) {
            expired.record("near")
            fired.fire()
        }
        #expect(await eventually(within: .seconds(10)) { fired.hasFired })
        // Thirty ticks: seven turns of the wheel and more.
        #expect(ContinuousClock.now - registered >= .milliseconds(300) - watchdog.tick)
        // Every slot has been visited since `dropped` was cancelled.
        #expect(watchdog.cancel(moved))
        #expect(expired.all == ["near"])
    }

    /// The cancel of a deadline that expired cancels nothing else, not the deadline put where it
    /// was in the wheel after it.
    @Test func theCancelOfAnExpiredDeadlineLeavesTheOneInItsPlace() async {
        let watchdog = DeadlineWatchdog(tick: .milliseconds(10), slots: 1)
        let fired = Signal()
        let first = watchdog.register(after: .milliseconds(20)) { fired.fire() }
        await fired.wait()
        let second = Signal()
        _ = watchdog.register(after: .milliseconds(50)) { second.fire() }
        #expect(!watchdog.cancel(first))
        #expect(await eventually(within: .seconds(10)) { second.hasFired })
    }
}
