import Synchronization

/// A root's count of the scopes opened on it and not yet closed, and who waits for it to reach
/// zero: what a shutdown drains.
///
/// The count is an atomic, so that the requests of every core do not queue on a lock to count
/// themselves; the lock is taken only by a drain, and by a close that reaches zero while a drain
/// waits. A server's requests, which bring the count to zero whenever the server is briefly
/// idle, take no lock of the root's.
final class OpenScopes: Sendable {
    private let open = Atomic<Int>(0)
    /// Who waits for the count to reach zero.
    private let drainWaiters = Mutex<[CheckedContinuation<Void, Never>]>([])
    /// Whether a drain waits: set under the lock before the drain reads the count, read by the
    /// close that reaches zero after it counted down, both sequentially consistent, so that
    /// either the close sees a drain waiting or the drain sees the count at zero.
    private let isDrainWaiting = Atomic<Bool>(false)
    /// Whether the close that reaches zero records when: a tenant's, whose idle time decides
    /// its eviction.
    private let tracksIdleTime: Bool
    /// When the count last reached zero, in nanoseconds of ``NanosecondClock``; 0 while it has not.
    private let idleSinceNanoseconds = Atomic<Int64>(0)

    init(tracksIdleTime: Bool = false) {
        self.tracksIdleTime = tracksIdleTime
    }

    /// The number of scopes open now.
    var count: Int { open.load(ordering: .acquiring) }

    /// When the count last reached zero, in nanoseconds of ``NanosecondClock``, for an idle-time
    /// tracking count; 0 before it first did.
    var idleSince: Int64 { idleSinceNanoseconds.load(ordering: .acquiring) }

    func opened() {
        open.wrappingAdd(1, ordering: .relaxed)
    }

    /// Counts a scope closed; the close that reaches zero wakes the drain's waiters.
    func closed() {
        // Sequentially consistent (on x86 the same locked instruction as acquiring-releasing),
        // so that a drain that sees 0 also sees what the scope did, and so that the read of
        // `isDrainWaiting` below cannot be ordered before it.
        let remaining = open.wrappingSubtract(1, ordering: .sequentiallyConsistent).newValue
        precondition(remaining >= 0, "a scope was counted closed more often than opened")
        guard remaining == 0 else { return }
        if tracksIdleTime { idleSinceNanoseconds.store(NanosecondClock.nanoseconds(), ordering: .releasing) }
        guard isDrainWaiting.load(ordering: .sequentiallyConsistent) else { return }
        let waiters = drainWaiters.withLock { waiters -> [CheckedContinuation<Void, Never>] in
            // A scope may have opened since: then its close wakes the waiters.
            guard count == 0 else { return [] }
            defer {
                waiters = []
                isDrainWaiting.store(false, ordering: .sequentiallyConsistent)
            }
            return waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once no scope is open.
    func drained() async {
        await withCheckedContinuation { continuation in
            // Announced before the count is read, and the count read under the lock that
            // `closed()` takes when it sees the announcement: a waiter added here is either
            // woken by the close that reaches 0 or sees 0 itself.
            let drained = drainWaiters.withLock { waiters in
                isDrainWaiting.store(true, ordering: .sequentiallyConsistent)
                if open.load(ordering: .sequentiallyConsistent) == 0 {
                    if waiters.isEmpty { isDrainWaiting.store(false, ordering: .sequentiallyConsistent) }
                    return true
                }
                waiters.append(continuation)
                return false
            }
            if drained { continuation.resume() }
        }
    }
}
