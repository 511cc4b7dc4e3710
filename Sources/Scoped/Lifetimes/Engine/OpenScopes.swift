import Synchronization

/// A root's count of the scopes opened on it and not yet closed, and who waits for it to reach
/// zero: what a shutdown drains.
///
/// The count is an atomic, so that the requests of every core do not queue on a lock to count
/// themselves; the lock is taken only by a drain and by the close that ends one.
final class OpenScopes: Sendable {
    private let open = Atomic<Int>(0)
    /// Who waits for the count to reach zero.
    private let drainWaiters = Mutex<[CheckedContinuation<Void, Never>]>([])
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
        // Acquiring-releasing, so that a drain that sees 0 also sees what the scope did.
        let remaining = open.wrappingSubtract(1, ordering: .acquiringAndReleasing).newValue
        precondition(remaining >= 0, "a scope was counted closed more often than opened")
        guard remaining == 0 else { return }
        if tracksIdleTime { idleSinceNanoseconds.store(NanosecondClock.nanoseconds(), ordering: .releasing) }
        let waiters = drainWaiters.withLock { waiters -> [CheckedContinuation<Void, Never>] in
            // A scope may have opened since: then its close wakes the waiters.
            guard count == 0 else { return [] }
            defer { waiters = [] }
            return waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once no scope is open.
    func drained() async {
        await withCheckedContinuation { continuation in
            // Checked under the lock that `closed()` takes after counting down to 0, so a
            // waiter added here is either woken by it or sees 0 itself.
            let drained = drainWaiters.withLock { waiters in
                if count == 0 { return true }
                waiters.append(continuation)
                return false
            }
            if drained { continuation.resume() }
        }
    }
}
