@testable import Scoped
import ScopedTestSupport
import Synchronization
import Testing

/// Built slowly: its construction waits until the test lets it finish.
private enum SlowServiceKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.app
    static func makeValue() async throws -> Int {
        let gate = ScopedValues.current.slowConstruction!
        gate.started.fire()
        await gate.finish.wait()
        gate.builds.add(1, ordering: .relaxed)
        return 42
    }
}

private final class SlowConstruction: Sendable {
    let started = Signal()
    let finish = Signal()
    let builds = Atomic(0)
}

extension ScopedValues {
    @Entry fileprivate var slowConstruction: SlowConstruction? = nil
}

struct CancellationReachesWorkTests {
    @Test func cancellingTheWorkHandOffReturnsCancelsIt() async throws {
        let root = ScopeRoot()
        let started = Signal()
        let sawCancellation = Signal()
        let work = try await root.withScope {
            handOff(timeout: .seconds(60)) {
                started.fire()
                do {
                    try await Task.sleep(for: .seconds(60))
                } catch {
                    if Task.isCancelled { sawCancellation.fire() }
                    throw error
                }
            }
        }
        await started.wait()
        work.cancel()
        await #expect(throws: CancellationError.self) { try await work.value }
        #expect(sawCancellation.hasFired)
        await root.shutdown()
        #expect(root.openScopeCount == 0)
    }

    @Test func aReaderWaitingForAnotherTasksConstructionCanBeCancelled() async throws {
        let gate = SlowConstruction()
        let root = ScopeRoot { $0.slowConstruction = gate }
        let builder = Task { try await root.withScope { try await ScopedValues.current.service(SlowServiceKey.self) } }
        await gate.started.wait()
        let waiter = Task { try await root.withScope { try await ScopedValues.current.service(SlowServiceKey.self) } }
        // The waiter is queued behind the construction before it is cancelled.
        #expect(await eventually { root.openScopeCount == 2 })
        try await Task.sleep(for: .milliseconds(50))
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        // The construction goes on for the others, and happens once.
        gate.finish.fire()
        #expect(try await builder.value == 42)
        #expect(try await root.withScope { try await ScopedValues.current.service(SlowServiceKey.self) } == 42)
        #expect(gate.builds.load(ordering: .relaxed) == 1)
        await root.shutdown()
    }
}
