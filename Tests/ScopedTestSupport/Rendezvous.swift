import Synchronization

/// A meeting point for tests that must overlap: ``arrive(within:)`` returns once `parties`
/// callers have arrived, or once `timeout` has passed (when the others were filtered out of the
/// run), and says which.
public final class Rendezvous: Sendable {
    private let parties: Int
    private let state = Mutex<(arrived: Int, waiters: [CheckedContinuation<Void, Never>])>((0, []))

    /// A meeting point for `parties` callers.
    public init(parties: Int) {
        self.parties = parties
    }

    /// Waits until every party has arrived, for at most `timeout`.
    ///
    /// - Returns: whether every party arrived.
    @discardableResult
    public func arrive(within timeout: Duration = .seconds(10)) async -> Bool {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.arrived += 1
            guard state.arrived >= parties else { return [] }
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
        let all = Signal()
        let wait = Task {
            await withCheckedContinuation { continuation in
                let met = state.withLock { state in
                    if state.arrived >= parties { return true }
                    state.waiters.append(continuation)
                    return false
                }
                if met { continuation.resume() }
            }
            all.fire()
        }
        let timer = Task {
            try? await Task.sleep(for: timeout)
            all.fire()
        }
        await all.wait()
        timer.cancel()
        _ = wait
        return state.withLock { $0.arrived >= parties }
    }
}
