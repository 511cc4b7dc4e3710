import Foundation

/// Ends work that runs past its deadline: a database statement, a service's close.
///
/// Work registers its deadline and how to end it (interrupt a statement, close a connection,
/// stop waiting for a close); one thread of its own, asleep while nothing is registered, wakes
/// every ``tick`` and ends what expired. A thread rather than a task: a deadline must fire even
/// when every thread of Swift's cooperative pool is blocked in a statement, which is when it
/// matters most; and registering one creates no task, so a bounded close costs a request no
/// timer task.
package final class DeadlineWatchdog: @unchecked Sendable {
    // `@unchecked Sendable`: `entries` and `nextID` are touched only with `condition` locked.
    private struct Entry {
        let deadline: ContinuousClock.Instant
        let expire: @Sendable () -> Void
    }

    /// The process's watchdog.
    package static let shared = DeadlineWatchdog(tick: .milliseconds(20))

    /// How often the thread looks for expired deadlines while any is registered: a deadline is
    /// enforced at most this late.
    package let tick: Duration
    private let condition = NSCondition()
    private var entries: [UInt64: Entry] = [:]
    private var nextID: UInt64 = 0

    package init(tick: Duration) {
        self.tick = tick
        let thread = Thread { [unowned self] in self.watch() }
        thread.name = "Scoped deadlines"
        thread.start()
    }

    /// Calls `expire` on the watchdog's thread once `timeout` has passed, unless the returned
    /// deadline is cancelled first.
    ///
    /// `expire` must end the work soon; it runs at most once, at most ``tick`` late.
    package func register(after timeout: Duration, expire: @escaping @Sendable () -> Void) -> Deadline {
        Deadline(id: register(Entry(deadline: .now + timeout, expire: expire)))
    }

    /// Cancels `deadline`; returns `false` when it had expired already (its `expire` has run or
    /// is running).
    @discardableResult
    package func cancel(_ deadline: Deadline) -> Bool {
        unregister(deadline.id)
    }

    /// A registered deadline.
    package struct Deadline: Sendable {
        fileprivate let id: UInt64
    }

    private func register(_ entry: Entry) -> UInt64 {
        condition.lock()
        defer { condition.unlock() }
        nextID += 1
        entries[nextID] = entry
        condition.signal()
        return nextID
    }

    /// Removes a deadline; `false` when it had expired already.
    private func unregister(_ id: UInt64) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        return entries.removeValue(forKey: id) != nil
    }

    /// The thread's loop, for the life of the process.
    private func watch() {
        let seconds = Double(tick.components.seconds) + Double(tick.components.attoseconds) / 1e18
        while true {
            condition.lock()
            while entries.isEmpty { condition.wait() }
            condition.unlock()
            Thread.sleep(forTimeInterval: seconds)
            let now = ContinuousClock.now
            condition.lock()
            let expired = entries.filter { $0.value.deadline <= now }
            for id in expired.keys { entries[id] = nil }
            condition.unlock()
            for entry in expired.values { entry.expire() }
        }
    }
}
