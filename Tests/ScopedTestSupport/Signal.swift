import Synchronization

/// A one-shot signal between tasks: ``wait()`` suspends until ``fire()`` has been called, and
/// returns at once after it.
public final class Signal: Sendable {
    private let state = Mutex<(fired: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    /// Creates a signal that has not fired.
    public init() {}

    /// Fires the signal, waking every waiter; later calls do nothing.
    public func fire() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard !state.fired else { return [] }
            state.fired = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Whether the signal has fired.
    public var hasFired: Bool { state.withLock { $0.fired } }

    /// Suspends until the signal has fired.
    public func wait() async {
        await withCheckedContinuation { continuation in
            let fired = state.withLock { state in
                if state.fired { return true }
                state.waiters.append(continuation)
                return false
            }
            if fired { continuation.resume() }
        }
    }
}
