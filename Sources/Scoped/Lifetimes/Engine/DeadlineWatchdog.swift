import Dispatch
import Synchronization

/// Ends work that runs past its deadline: a database statement, a service's close, a wait for a
/// connection.
///
/// Work registers its deadline and how to end it (interrupt a statement, close a connection,
/// stop waiting for a close); a timer fires every ``tick`` and ends what expired. The core bounds
/// closes, shutdowns and handed-off work with it; database layers bound statements and waits for
/// a connection with it (ScopedDatabase's `AsyncPool` and `SessionLease` are written on it), and
/// so can a layer written outside this package:
///
/// ```swift
/// let deadline = DeadlineWatchdog.shared.register(after: statementTimeout) { connection.interrupt() }
/// defer { DeadlineWatchdog.shared.cancel(deadline) }
/// return try await connection.run(statement)
/// ```
/// A Dispatch
/// timer on a serial queue rather than a task: libdispatch runs a serial queue on an
/// overcommitting thread, so a deadline fires even when every thread of Swift's cooperative pool
/// is blocked in a statement, which is when it matters most; and registering one creates no
/// task, so a bounded close costs a request no timer task.
///
/// The registered deadlines own the timer: it is made with the first and cancelled once none
/// has been registered for ``idleGrace`` (so a server between two requests keeps it, and a
/// process whose roots and databases have all shut down has none); in between it only stops
/// ticking. Nothing of the watchdog runs, and no Dispatch source of it exists, while no work
/// has a deadline.
public final class DeadlineWatchdog: @unchecked Sendable {
    // `@unchecked Sendable`: the Dispatch timer is made, scheduled and cancelled only with
    // `state` locked; the rest is immutable.
    private struct Entry {
        let tick: Int64
        let expire: @Sendable () -> Void
    }

    private struct State {
        /// The registered deadlines by ID: registering and cancelling are one insertion or removal.
        var entries: [UInt64: Entry] = [:]
        /// The IDs registered for each tick: a timer wheel keyed by tick number.
        ///
        /// A firing visits only the ticks that passed since the last one, not every deadline. A
        /// cancelled ID stays in its bucket and is skipped; buckets are rebuilt once such IDs
        /// outnumber the live ones.
        var buckets: [Int64: [UInt64]] = [:]
        var bucketed = 0
        /// The last tick whose bucket was emptied.
        var checkedTick: Int64 = 0
        var nextID: UInt64 = 0
        /// The timer, from the first deadline registered until ``idleGrace`` after the last.
        var timer: (any DispatchSourceTimer)?
        /// Whether the timer fires every tick (while any deadline is registered).
        var isTicking = false

        /// Registers `entry`; returns its ID.
        mutating func register(_ entry: Entry) -> UInt64 {
            nextID += 1
            entries[nextID] = entry
            buckets[entry.tick, default: []].append(nextID)
            bucketed += 1
            if bucketed > 2 * entries.count + 1024 {
                // Drops the IDs of cancelled deadlines.
                buckets = [:]
                for (id, entry) in entries { buckets[entry.tick, default: []].append(id) }
                bucketed = entries.count
            }
            return nextID
        }

        /// Takes out the deadlines due by tick `current`.
        mutating func takeExpired(upTo current: Int64) -> [Entry] {
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
            // The ticks that passed since the last check (one, while the timer keeps up), or the
            // buckets that exist when fewer (after a long pause).
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
    }

    /// The process's watchdog, which every deadline of the library is registered on.
    public static let shared = DeadlineWatchdog(tick: .milliseconds(20))

    /// How often the timer looks for expired deadlines while any is registered: a deadline is
    /// enforced at most this late.
    public let tick: Duration
    /// How long the timer outlives the last deadline: longer than the gap between two requests
    /// of a server at rest, so a quiet server does not make one timer per request.
    public let idleGrace: Duration
    private let tickNanoseconds: Int64
    private let idleGraceNanoseconds: Int
    private let origin = NanosecondClock.nanoseconds()
    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "Scoped deadlines")

    init(tick: Duration, idleGrace: Duration = .seconds(1)) {
        self.tick = tick
        self.idleGrace = idleGrace
        tickNanoseconds = max(1, NanosecondClock.nanoseconds(tick))
        idleGraceNanoseconds = Int(NanosecondClock.nanoseconds(idleGrace))
    }

    /// Whether the watchdog has a timer now: from its first deadline until ``idleGrace`` after
    /// its last.
    var hasTimer: Bool { state.withLock { $0.timer != nil } }

    /// Calls `expire` on the watchdog's queue once `timeout` has passed, unless the returned
    /// deadline is cancelled first.
    ///
    /// `expire` must end the work soon; it runs at most once, at most ``tick`` late. Registering
    /// creates no task and no timer of its own: one timer serves every deadline.
    ///
    /// - Parameters:
    ///   - timeout: How long from now the work may run.
    ///   - expire: Ends the work; runs on the watchdog's queue, never on the cooperative pool.
    /// - Returns: The deadline, to give to ``cancel(_:)`` once the work ends in time.
    public func register(after timeout: Duration, expire: @escaping @Sendable () -> Void) -> Deadline {
        // The first tick at or after the deadline; a timeout too long for a word never expires.
        let (nanoseconds, overflow) = (NanosecondClock.nanoseconds() - origin)
            .addingReportingOverflow(NanosecondClock.nanoseconds(timeout))
        let tick =
            overflow ? Int64.max : nanoseconds / tickNanoseconds + (nanoseconds % tickNanoseconds > 0 ? 1 : 0)
        return state.withLock { state in
            // Never a tick already checked (a timeout of zero or less): the next one.
            let id = state.register(Entry(tick: max(tick, state.checkedTick + 1), expire: expire))
            if !state.isTicking {
                state.isTicking = true
                let timer = state.timer ?? makeTimer()
                state.timer = timer
                let interval = DispatchTimeInterval.nanoseconds(Int(tickNanoseconds))
                timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(1))
            }
            return Deadline(id: id)
        }
    }

    /// Cancels `deadline`; returns `false` when it had expired already (its `expire` has run or
    /// is running).
    @discardableResult
    public func cancel(_ deadline: Deadline) -> Bool {
        state.withLock { $0.entries.removeValue(forKey: deadline.id) != nil }
    }

    /// A registered deadline, returned by ``register(after:expire:)``.
    public struct Deadline: Sendable {
        fileprivate let id: UInt64
    }

    /// A timer on the watchdog's queue, activated and not yet scheduled.
    private func makeTimer() -> any DispatchSourceTimer {
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.setEventHandler { [weak self] in self?.expireDue() }
        timer.activate()
        return timer
    }

    /// Ends what expired, on the timer's queue.
    ///
    /// Once nothing is registered the timer stops ticking and fires once more after
    /// ``idleGrace``; if nothing was registered meanwhile, that firing cancels it.
    private func expireDue() {
        let current = (NanosecondClock.nanoseconds() - origin) / tickNanoseconds
        let expired = state.withLock { state in
            let expired = state.takeExpired(upTo: current)
            if state.entries.isEmpty {
                if state.isTicking {
                    state.isTicking = false
                    state.timer?.schedule(deadline: .now() + .nanoseconds(idleGraceNanoseconds))
                } else {
                    state.timer?.cancel()
                    state.timer = nil
                }
            }
            return expired
        }
        for entry in expired { entry.expire() }
    }
}
