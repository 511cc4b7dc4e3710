@testable import Scoped
import Testing

/// The scope entry points run their operations on the caller's actor.
///
/// They are `nonisolated(nonsending)`. The operations below touch the actor's state
/// synchronously, which compiles only if they are isolated to it, and check at run time that
/// they run on it.
@Suite struct CallerIsolationTests {
    actor Ledger {
        private(set) var entries: [String] = []

        func record(in root: ScopeRoot) async throws {
            try await root.withScope({ $0.copyright = "root.withScope" }) {
                self.assertIsolated()
                entries.append(ScopedValues.current.copyright)
                try await withScope({ $0.copyright = "withScope" }) {
                    self.assertIsolated()
                    entries.append(ScopedValues.current.copyright)
                }
                await withScopedValues({ $0.copyright = "withScopedValues" }) {
                    await Task.yield()
                    self.assertIsolated()
                    entries.append(ScopedValues.current.copyright)
                }
            }
            let scope = root.openScope { $0.copyright = "Scope.run" }
            try await scope.run {
                await Task.yield()
                self.assertIsolated()
                entries.append(ScopedValues.current.copyright)
            }
            try await scope.close(.success)
        }
    }

    @Test func operationsRunOnTheCallersActor() async throws {
        let root = ScopeRoot()
        let ledger = Ledger()
        try await ledger.record(in: root)
        #expect(await ledger.entries == ["root.withScope", "withScope", "withScopedValues", "Scope.run"])
    }

    @MainActor
    @Test func operationsRunOnTheMainActorWhenCalledFromIt() async throws {
        let root = ScopeRoot()
        var reads: [String] = []
        try await root.withScope({ $0.copyright = "main" }) {
            await Task.yield()
            MainActor.assertIsolated()
            reads.append(ScopedValues.current.copyright)
        }
        #expect(reads == ["main"])
    }
}
