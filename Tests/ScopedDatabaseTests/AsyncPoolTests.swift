import Scoped
import ScopedDatabase
import ScopedTestSupport
import Testing

private struct Closed: Error {}
private struct TimedOut: Error {}

/// The pool behind every connection lease and session turn: waiting is a continuation and a
/// watchdog deadline, and whoever takes a waiter out of the queue resumes it.
struct AsyncPoolTests {
    private func pool(_ count: Int) -> AsyncPool<Int> {
        AsyncPool(Array(0..<count)) { Closed() }
    }

    @Test func aWaiterThatTimesOutLeavesTheQueueAndTheNextReleaseKeepsTheResource() async throws {
        let pool = pool(1)
        let held = try await pool.acquire()
        let clock = ContinuousClock()
        let started = clock.now
        await #expect(throws: TimedOut.self) {
            _ = try await pool.acquire(waitingAtMost: .milliseconds(100)) { TimedOut() }
        }
        #expect(clock.now - started >= .milliseconds(100))
        pool.release(held)
        // Had the timed-out waiter stayed queued, the resource would have gone to it.
        #expect(pool.availableCount == 1)
    }

    /// A release racing a waiter's deadline loses no resource.
    ///
    /// Hundreds of times at offsets around the deadline, each waiter either gets the resource (and
    /// returns it) or times out, and the pool ends with its one resource. A waiter resumed by its deadline but left in the queue takes the next release
    /// into a continuation nothing awaits: the pool then shrinks, and its close waits for ever.
    @Test func aReleaseRacingTheDeadlineLosesNoResource() async throws {
        let pool = pool(1)
        let (acquired, timedOut) = (Recorder<Int>(), Recorder<Int>())
        for round in 0..<300 {
            let held = try await pool.acquire()
            let offset = Duration.milliseconds(round % 60)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    do {
                        let resource = try await pool.acquire(waitingAtMost: .milliseconds(30)) { TimedOut() }
                        acquired.record(round)
                        pool.release(resource)
                    } catch is TimedOut {
                        timedOut.record(round)
                    }
                }
                group.addTask {
                    try await Task.sleep(for: offset)
                    pool.release(held)
                }
                try await group.waitForAll()
            }
            #expect(pool.availableCount == 1, "round \(round)")
        }
        #expect(acquired.all.count + timedOut.all.count == 300)
        // Both ways of ending happened: the race was run, not one side of it.
        #expect(acquired.all.count > 0 && timedOut.all.count > 0)
        #expect(await pool.close() == [0])
    }

    @Test func aCancelledWaiterThrowsAndTheResourceGoesToTheNextOne() async throws {
        let pool = pool(1)
        let held = try await pool.acquire()
        let cancelled = Task { try await pool.acquire(waitingAtMost: .seconds(60)) { TimedOut() } }
        let next = Task { try await pool.acquire(waitingAtMost: .seconds(60)) { TimedOut() } }
        try await Task.sleep(for: .milliseconds(50))
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        pool.release(held)
        #expect(try await next.value == held)
        pool.release(held)
        #expect(pool.availableCount == 1)
    }

    @Test func closingFailsEveryWaiterOnceAndTheirDeadlinesNeverFire() async throws {
        let pool = pool(1)
        let held = try await pool.acquire()
        // Queued before the close or not, each is refused as closed, long before its deadline.
        let waiters = (0..<8)
            .map { _ in
                Task { try await pool.acquire(waitingAtMost: .seconds(2)) { TimedOut() } }
            }
        let closing = Task { await pool.close() }
        for waiter in waiters {
            await #expect(throws: Closed.self) { try await waiter.value }
        }
        // The deadlines pass with nothing left to resume (a second resume would trap).
        try await Task.sleep(for: .milliseconds(2200))
        pool.release(held)
        #expect(await closing.value == [held])
    }

    /// Tasks waiting at once, each with a deadline, cost each other O(1): ten times the waiters
    /// take about ten times as long, not a hundred.
    ///
    /// The queue is keyed by waiter and the deadlines are a timer wheel. A scan of the queue per
    /// waiter (the first continuation waiter) made ten thousand waiters take 9.9 s alone here
    /// against 0.1 s for a thousand, held the pool's lock for seconds and starved Swift's two
    /// cooperative threads: every other suite's statements then ran past their deadlines. A ratio
    /// rather than a time: under the full suite beside a build, both sizes slow down together.
    @Test func waitersCostEachOtherNothingAsTheirNumberGrows() async throws {
        let thousand = try await timeToServe(1_000)
        let tenThousand = try await timeToServe(10_000)
        #expect(tenThousand < thousand * 25 + .seconds(1), "1,000: \(thousand), 10,000: \(tenThousand)")
    }

    /// How long `count` waiters, all queued on a pool of one, take to queue and each get and
    /// return it.
    private func timeToServe(_ count: Int) async throws -> Duration {
        let pool = pool(1)
        let held = try await pool.acquire()
        let served = Recorder<Int>()
        let clock = ContinuousClock()
        let started = clock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<count {
                group.addTask {
                    let resource = try await pool.acquire(waitingAtMost: .seconds(600)) { TimedOut() }
                    served.record(0)
                    pool.release(resource)
                }
            }
            // Released once every task waits: the queue at its longest.
            while pool.waitingCount < count { await Task.yield() }
            pool.release(held)
            try await group.waitForAll()
        }
        #expect(served.all.count == count)
        #expect(pool.availableCount == 1)
        return clock.now - started
    }

    @Test func contendedWaitersEachGetATurn() async throws {
        let pool = pool(2)
        let served = Recorder<Int>()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<200 {
                group.addTask {
                    let resource = try await pool.acquire(waitingAtMost: .seconds(30)) { TimedOut() }
                    served.record(0)
                    try await Task.sleep(for: .microseconds(200))
                    pool.release(resource)
                }
            }
            try await group.waitForAll()
        }
        #expect(served.all.count == 200)
        #expect(pool.availableCount == 2)
    }
}
