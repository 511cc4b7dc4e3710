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
    // `@unchecked Sendable`: `entries`, `buckets`, `bucketed`, `checkedTick` and `nextID` are
    // touched only with `condition` locked.
    private struct Entry {
        let tick: Int64
        let expire: @Sendable () -> Void
    }

    /// The process's watchdog.
    package static let shared = DeadlineWatchdog(tick: .milliseconds(20))

    /// How often the thread looks for expired deadlines while any is registered: a deadline is
    /// enforced at most this late.
    package let tick: Duration
    private let tickNanoseconds: Int64
    private let origin = ContinuousClock.now
    private let condition = NSCondition()
    /// The registered deadlines by ID: registering and cancelling are one insertion or removal.
    private var entries: [UInt64: Entry] = [:]
    /// The IDs registered for each tick: a timer wheel keyed by tick number.
    ///
    /// A wake-up visits only the ticks that passed since the last one, not every deadline. A
    /// cancelled ID stays in its bucket and is skipped; buckets are rebuilt once such IDs
    /// outnumber the live ones.
    private var buckets: [Int64: [UInt64]] = [:]
    private var bucketed = 0
    /// The last tick whose bucket was emptied.
    private var checkedTick: Int64 = 0
    private var nextID: UInt64 = 0

    package init(tick: Duration) {
        self.tick = tick
        tickNanoseconds = max(1, Self.nanoseconds(tick))
        let thread = Thread { [unowned self] in self.watch() }
        thread.name = "Scoped deadlines"
        thread.start()
    }

    /// Calls `expire` on the watchdog's thread once `timeout` has passed, unless the returned
    /// deadline is cancelled first.
    ///
    /// `expire` must end the work soon; it runs at most once, at most ``tick`` late.
    package func register(after timeout: Duration, expire: @escaping @Sendable () -> Void) -> Deadline {
        // The first tick at or after the deadline.
        let tick = (Self.nanoseconds(ContinuousClock.now + timeout - origin) + tickNanoseconds - 1) / tickNanoseconds
        condition.lock()
        defer { condition.unlock() }
        // Never a tick already checked (a timeout of zero or less): the next one.
        let due = max(tick, checkedTick + 1)
        nextID += 1
        let id = nextID
        entries[id] = Entry(tick: due, expire: expire)
        buckets[due, default: []].append(id)
        bucketed += 1
        if bucketed > 2 * entries.count + 1024 { rebuildBuckets() }
        if entries.count == 1 { condition.signal() }
        return Deadline(id: id)
    }

    /// Cancels `deadline`; returns `false` when it had expired already (its `expire` has run or
    /// is running).
    @discardableResult
    package func cancel(_ deadline: Deadline) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        return entries.removeValue(forKey: deadline.id) != nil
    }

    /// A registered deadline.
    package struct Deadline: Sendable {
        fileprivate let id: UInt64
    }

    /// Drops the IDs of cancelled deadlines from the buckets.
    private func rebuildBuckets() {
        buckets = [:]
        for (id, entry) in entries { buckets[entry.tick, default: []].append(id) }
        bucketed = entries.count
    }

    /// Takes out the deadlines due by `now`; called with `condition` locked.
    private func takeExpired(now: ContinuousClock.Instant) -> [Entry] {
        let current = Self.nanoseconds(now - origin) / tickNanoseconds
        defer { checkedTick = current }
        guard !entries.isEmpty else {
            buckets = [:]
            bucketed = 0
            return []
        }
        var expired: [Entry] = []
        func empty(_ tick: Int64) {
            guard let ids = buckets.removeValue(forKey: tick) else { return }
            bucketed -= ids.count
            for id in ids {
                if let entry = entries.removeValue(forKey: id) { expired.append(entry) }
            }
        }
        // The ticks that passed since the last check (one, while the thread keeps up), or the
        // buckets that exist when fewer (after a long sleep).
        if current - checkedTick <= Int64(buckets.count) {
            var tick = checkedTick + 1
            while tick <= current {
                empty(tick)
                tick += 1
            }
        } else {
            for tick in buckets.keys.filter({ $0 <= current }) { empty(tick) }
        }
        return expired
    }

    /// The thread's loop, for the life of the process.
    private func watch() {
        let seconds = Double(tickNanoseconds) / 1e9
        while true {
            condition.lock()
            while entries.isEmpty { condition.wait() }
            condition.unlock()
            Thread.sleep(forTimeInterval: seconds)
            condition.lock()
            let expired = takeExpired(now: .now)
            condition.unlock()
            for entry in expired { entry.expire() }
        }
    }

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
