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
/// ticking. Its timer (a Dispatch source) outlives the last deadline by ``idleGrace``, then
/// nothing of the watchdog runs; its Dispatch queue, which holds no thread while idle, lives as
/// long as the watchdog.
public final class DeadlineWatchdog: @unchecked Sendable {
    // `@unchecked Sendable`: the Dispatch timer is made, scheduled and cancelled only with
    // `state` locked; the rest is immutable.
    /// A registered deadline in its slot of the wheel; `expire` is `nil` once cancelled.
    private struct Entry {
        let id: UInt64
        let tick: Int64
        var expire: (@Sendable () -> Void)?
    }

    private struct State {
        /// A timer wheel: slot `tick % wheel.count` holds the deadlines of every tick congruent
        /// to it, in the order registered (so by ID).
        ///
        /// Registering appends to a slot; cancelling finds the entry by binary search on its ID
        /// and drops its `expire`: no hashing,
        /// which on dictionaries of deadlines cost 2,000 instructions a deadline. A firing
        /// visits only the slots of the ticks that passed, where it expires what is due, drops
        /// what was cancelled, and keeps the deadlines a whole turn of the wheel away or more.
        var wheel: [[Entry]]
        /// The deadlines registered and neither cancelled nor expired.
        var live = 0
        /// The last tick whose slot was visited.
        var checkedTick: Int64 = 0
        var nextID: UInt64 = 0
        /// The timer, from the first deadline registered until ``idleGrace`` after the last.
        var timer: (any DispatchSourceTimer)?
        /// Whether the timer fires every tick (while any deadline is registered).
        var isTicking = false

        init(slots: Int) { wheel = Array(repeating: [], count: slots) }

        func slot(of tick: Int64) -> Int { Int(tick % Int64(wheel.count)) }

        /// Registers `expire` for `tick`.
        mutating func register(tick: Int64, expire: @escaping @Sendable () -> Void) -> Deadline {
            nextID += 1
            live += 1
            let slot = slot(of: tick)
            wheel[slot].append(Entry(id: nextID, tick: tick, expire: expire))
            return Deadline(id: nextID, tick: tick)
        }

        /// Drops `deadline`'s `expire`; `false` when it expired or was cancelled already.
        mutating func cancel(_ deadline: Deadline) -> Bool {
            let slot = slot(of: deadline.tick)
            guard let position = Self.position(of: deadline.id, in: wheel[slot]),
                wheel[slot][position].expire != nil
            else { return false }
            wheel[slot][position].expire = nil
            live -= 1
            return true
        }

        /// Where the entry `id` is in `entries`, which are sorted by ID; `nil` when it is not.
        static func position(of id: UInt64, in entries: [Entry]) -> Int? {
            var low = 0
            var high = entries.count
            while low < high {
                let middle = (low + high) / 2
                if entries[middle].id < id { low = middle + 1 } else { high = middle }
            }
            return low < entries.count && entries[low].id == id ? low : nil
        }

        /// Takes out the deadlines due by tick `current`.
        mutating func takeExpired(upTo current: Int64) -> [@Sendable () -> Void] {
            defer { checkedTick = current }
            var expired: [@Sendable () -> Void] = []
            // The ticks that passed since the last visit, at most one turn of the wheel (after a
            // long pause, every slot once).
            var tick = max(checkedTick + 1, current - Int64(wheel.count) + 1)
            while tick <= current {
                let slot = slot(of: tick)
                if !wheel[slot].isEmpty {
                    // Kept in order, in place: the slot keeps its capacity.
                    var kept = 0
                    for index in wheel[slot].indices {
                        let entry = wheel[slot][index]
                        guard let expire = entry.expire else { continue }
                        if entry.tick <= current {
                            expired.append(expire)
                            live -= 1
                        } else {
                            wheel[slot][kept] = entry
                            kept += 1
                        }
                    }
                    wheel[slot].removeLast(wheel[slot].count - kept)
                }
                tick += 1
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
    private let state: Mutex<State>
    private let queue = DispatchQueue(label: "Scoped deadlines")

    /// A watchdog that looks for expired deadlines every `tick`, on a wheel of `slots` ticks.
    init(tick: Duration, idleGrace: Duration = .seconds(1), slots: Int = 1024) {
        precondition(slots > 0, "a wheel has a slot")
        state = Mutex(State(slots: slots))
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
            let deadline = state.register(tick: max(tick, state.checkedTick + 1), expire: expire)
            if !state.isTicking {
                state.isTicking = true
                let timer = state.timer ?? makeTimer()
                state.timer = timer
                let interval = DispatchTimeInterval.nanoseconds(Int(tickNanoseconds))
                timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(1))
            }
            return deadline
        }
    }

    /// Cancels `deadline`; returns `false` when it had expired already (its `expire` has run or
    /// is running).
    @discardableResult
    public func cancel(_ deadline: Deadline) -> Bool {
        state.withLock { $0.cancel(deadline) }
    }

    /// A registered deadline, returned by ``register(after:expire:)``.
    public struct Deadline: Sendable {
        fileprivate let id: UInt64
        fileprivate let tick: Int64
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
            if state.live == 0 {
                if state.isTicking {
                    state.isTicking = false
                    state.timer?.schedule(deadline: .now() + .nanoseconds(idleGraceNanoseconds))
                } else {
                    state.timer?.cancel()
                    state.timer = nil
                    // Only cancelled deadlines are left: their slots' memory goes with the timer.
                    state.wheel = Array(repeating: [], count: state.wheel.count)
                }
            }
            return expired
        }
        for expire in expired { expire() }
    }
}
