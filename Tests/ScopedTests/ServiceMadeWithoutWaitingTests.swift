import Synchronization
import Testing

@testable import Scoped

/// A scope service that a caller which cannot wait makes with
/// `scopeServiceWithoutWaiting(_:makingWith:)`: a future-based driver's statement.
private final class CloseTally: Sendable {
    let closes = Mutex<[ScopeOutcome]>([])
}

private enum CloseTallyKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.scope

    static func makeValue() async throws -> CloseTally { CloseTally() }

    static func close(_ tally: CloseTally, outcome: ScopeOutcome) async throws {
        tally.closes.withLock { $0.append(outcome) }
    }
}

struct ServiceMadeWithoutWaitingTests {
    @Test func itIsMadeOncePerScopeFoundByItsAsyncReadersAndClosedWithItsScope() async throws {
        let root = ScopeRoot { _ in }
        let (first, again, read) = try await root.withScope {
            let values = ScopedValues.current
            let first = try #require(
                try values.scopeServiceWithoutWaiting(CloseTallyKey.self, makingWith: CloseTally.init)
            )
            let again = try #require(
                try values.scopeServiceWithoutWaiting(CloseTallyKey.self, makingWith: CloseTally.init)
            )
            // The scope built it: an async read finds the same instance.
            let read = try await values.service(CloseTallyKey.self)
            return (first, again, read)
        }
        #expect(first === again && first === read)
        #expect(first.closes.withLock { $0.map(\.isSuccess) } == [true])
        // Another scope, another instance, closed with its own outcome.
        let failing = CloseTally()
        await #expect(throws: CancellationError.self) {
            try await root.withScope {
                let tally = try #require(
                    try ScopedValues.current.scopeServiceWithoutWaiting(CloseTallyKey.self) { failing }
                )
                #expect(tally === failing)
                throw CancellationError()
            }
        }
        #expect(failing.closes.withLock { $0.count } == 1)
        #expect(failing.closes.withLock { $0.first?.isSuccess } == false)
        await root.shutdown()
    }

    @Test func outsideAScopeOfScopeServicesThereIsNoneAndNothingIsMade() async throws {
        #expect(
            try ScopedValues.current.scopeServiceWithoutWaiting(CloseTallyKey.self, makingWith: CloseTally.init) == nil
        )
        let root = ScopeRoot { _ in }
        #expect(try root.values.scopeServiceWithoutWaiting(CloseTallyKey.self, makingWith: CloseTally.init) == nil)
        await root.shutdown()
    }

    @Test func onceItsScopeHasEndedItRefusesToMakeOne() async throws {
        let root = ScopeRoot { _ in }
        let values = try await root.withScope { ScopedValues.current }
        let error = #expect(throws: ScopedError.self) {
            _ = try values.scopeServiceWithoutWaiting(CloseTallyKey.self, makingWith: CloseTally.init)
        }
        guard case .scopeEnded(let entry) = error else {
            Issue.record("expected scopeEnded, got \(String(describing: error))")
            return
        }
        #expect(entry == CloseTallyKey.name)
        await root.shutdown()
    }
}
