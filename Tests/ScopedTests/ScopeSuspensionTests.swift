import Dispatch
@testable import Scoped
import Synchronization
import Testing

/// A task executor that counts the jobs enqueued on it: a task running on it enqueues one job
/// each time it resumes after suspending.
final class CountingExecutor: TaskExecutor {
    private let count = Mutex(0)
    private let queue = DispatchQueue(label: "counting-executor")

    var enqueued: Int { count.withLock { $0 } }

    func enqueue(_ job: consuming ExecutorJob) {
        count.withLock { $0 += 1 }
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}

/// Closes after giving other tasks a turn: a service whose close has work to await.
enum YieldingResourceKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.scope
    static func makeValue() async throws -> Int { 1 }
    static func close(_ value: Int, outcome: ScopeOutcome) async throws { await Task.yield() }
}

struct ScopeSuspensionTests {
    /// How many times `body` suspended, run 100 times in a task on a counting executor.
    private func suspensions(_ body: @escaping @Sendable () async throws -> Void) async throws -> Int {
        let executor = CountingExecutor()
        return try await Task(executorPreference: executor) {
            let before = executor.enqueued
            for _ in 0..<100 { try await body() }
            return executor.enqueued - before
        }
        .value
    }

    @Test func aRequestScopeThatBuildsNoServiceOpensAndClosesWithoutSuspending() async throws {
        let root = ScopeRoot { $0.layer = 1 }
        let count = try await suspensions {
            let layer = try await root.withScope({ $0.layer = 2 }) { ScopedValues.current.layer }
            #expect(layer == 2)
        }
        #expect(count == 0)
        #expect(root.openScopeCount == 0)
    }

    @Test func closingAwaitsWhenAServiceItBuiltHasWorkToDo() async throws {
        let root = ScopeRoot()
        let count = try await suspensions {
            _ = try await root.withScope { try await ScopedValues.current.service(YieldingResourceKey.self) }
        }
        #expect(count >= 100)
    }
}
