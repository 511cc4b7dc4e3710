import Synchronization
public import Testing

/// Keeps the suites that flood the process (a thousand concurrent requests or messages) from
/// running at the same time as those that measure deadlines, and as each other.
///
/// Every SQLite write of the process queues for the same five threads, and on a 2-core machine
/// the cooperative pool has two: while a flood runs, a deadline suite's statement waited over
/// 5 s in the queue and a 5 s grace timer fired after 8 s. Both kinds still run alongside every
/// other suite.
public struct LoadExclusion: SuiteTrait, TestTrait, TestScoping {
    /// Applies once around the suite it is on, not around each of its tests.
    public var isRecursive: Bool { false }

    /// Runs `function` once no other suite with this trait runs.
    @concurrent
    public func provideScope(
        for test: Test,
        testCase: Test.Case?,
        performing function: @concurrent @Sendable () async throws -> Void
    ) async throws {
        await Self.gate.acquire()
        do {
            try await function()
        } catch {
            Self.gate.release()
            throw error
        }
        Self.gate.release()
    }

    private static let gate = Gate()
}

extension Trait where Self == LoadExclusion {
    /// Runs the suite while no other suite that floods the process or measures deadlines runs.
    public static var loadExclusion: Self { LoadExclusion() }
}

/// One holder at a time; the others wait in order.
private final class Gate: Sendable {
    private struct State {
        var held = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted = state.withLock { state -> Bool in
                if state.held {
                    state.waiters.append(continuation)
                    return false
                }
                state.held = true
                return true
            }
            if granted { continuation.resume() }
        }
    }

    func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiters.isEmpty else {
                state.held = false
                return nil
            }
            return state.waiters.removeFirst()
        }
        next?.resume()
    }
}
