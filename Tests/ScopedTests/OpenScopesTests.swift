import ScopedTestSupport
import Synchronization
import Testing

@testable import Scoped

/// A root's count of open scopes: a close that reaches zero takes no lock unless a drain waits,
/// and no drain misses the close it waits for.
struct OpenScopesTests {
    @Test func aDrainRacingTheLastCloseIsAlwaysWoken() async {
        // Each round, the last scope closes on another task while the drain starts: a drain that
        // neither saw zero nor was seen by the close would wait forever.
        for round in 0..<5_000 {
            let scopes = OpenScopes()
            scopes.opened()
            scopes.opened()
            let woken = Mutex(false)
            Task.detached {
                scopes.closed()
                scopes.closed()
            }
            Task.detached {
                await scopes.drained()
                woken.withLock { $0 = true }
            }
            guard await holds(within: .seconds(5), { woken.withLock { $0 } }) else {
                Issue.record("round \(round): the drain was never woken (\(scopes.count) scopes open)")
                return
            }
        }
    }

    @Test func aDrainWaitsForEveryScopeAndIsWokenByTheLastClose() async throws {
        let scopes = OpenScopes()
        scopes.opened()
        scopes.opened()
        let isDrained = Mutex(false)
        Task {
            await scopes.drained()
            isDrained.withLock { $0 = true }
        }
        scopes.closed()
        try await Task.sleep(for: .milliseconds(50))
        // One scope still open: the drain still waits.
        #expect(!isDrained.withLock { $0 })
        scopes.opened()
        scopes.closed()
        scopes.closed()
        #expect(await eventually { isDrained.withLock { $0 } })
        #expect(scopes.count == 0)
        // A drain once nothing is open returns at once, and the next close to zero, with no
        // drain waiting, leaves nothing behind.
        await scopes.drained()
        scopes.opened()
        scopes.closed()
        await scopes.drained()
    }

    /// Whether `condition` holds within `timeout`, checked between yields rather than sleeps:
    /// most rounds hold at the first or second check.
    private func holds(within timeout: Duration, _ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !condition() {
            guard ContinuousClock.now < deadline else { return false }
            await Task.yield()
        }
        return true
    }
}
