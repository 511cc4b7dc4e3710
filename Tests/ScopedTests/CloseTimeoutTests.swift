@testable import Scoped
import ScopedTestSupport
import Testing

/// A close that never returns, as a driver blocked on a dead peer's socket would.
private let neverReturns = Signal()

/// A scope service whose close hangs, with a close timeout of its own.
private enum HangingSessionKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.scope
    static let closeTimeout: Duration? = .milliseconds(100)
    static func makeValue() async throws -> Int { 1 }
    static func close(_ value: Int, outcome: ScopeOutcome) async throws { await neverReturns.wait() }
}

/// An app service whose close hangs, bounded by the root's default.
private enum HangingClientKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.app
    static func makeValue() async throws -> Int { 2 }
    static func close(_ value: Int, outcome: ScopeOutcome) async throws { await neverReturns.wait() }
}

/// A scope service that closes normally, after the hanging one.
private enum RecordedKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.scope
    static func makeValue() async throws -> Recorder<String> { ScopedValues.current.closed! }
    static func close(_ value: Recorder<String>, outcome: ScopeOutcome) async throws { value.record(name) }
}

/// A scope service whose close takes longer than the root's close timeout but bounds itself,
/// and records whether it ran in the closing task (which a cancelled scope shows).
private enum SelfBoundedKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.scope
    static let closeBoundsItself = true
    static func makeValue() async throws -> Recorder<String> { ScopedValues.current.closed! }
    static func close(_ value: Recorder<String>, outcome: ScopeOutcome) async throws {
        try? await Task.sleep(for: .milliseconds(300))
        value.record(Task.isCancelled ? "closed in the cancelled task" : "closed")
    }
}

extension ScopedValues {
    @Entry fileprivate var closed: Recorder<String>? = nil
}

struct CloseTimeoutTests {
    @Test func aCloseThatHangsIsAbandonedAfterItsKeysTimeoutAndTheScopeEnds() async throws {
        let closed = Recorder<String>()
        let failures = Recorder<String>()
        let root = ScopeRoot(onCloseError: { failures.record("\($0)") }) { $0.closed = closed }
        let error = await #expect(throws: ScopeCloseError.self) {
            try await root.withScope {
                _ = try await ScopedValues.current.service(RecordedKey.self)
                _ = try await ScopedValues.current.service(HangingSessionKey.self)
            }
        }
        let timeout = try #require(error?.failures.first?.error as? ScopeCloseError.Timeout)
        #expect(timeout == ScopeCloseError.Timeout(entry: HangingSessionKey.name, timeout: .milliseconds(100)))
        // The other services still closed, and the scope is no longer open.
        #expect(closed.all == [RecordedKey.name])
        #expect(root.openScopeCount == 0)
        await root.shutdown()
    }

    @Test func aCloseThatBoundsItselfRunsInlinePastTheRootsCloseTimeout() async throws {
        let closed = Recorder<String>()
        let failures = Recorder<String>()
        let root = ScopeRoot(onCloseError: { failures.record("\($0)") }, closeTimeout: .milliseconds(50)) {
            $0.closed = closed
        }
        // Not abandoned at 50 ms: the scope ends when the close has returned, with no error.
        try await root.withScope { _ = try await ScopedValues.current.service(SelfBoundedKey.self) }
        #expect(closed.all == ["closed"])
        // Inline: in the scope's own task, whose cancellation it sees (an abandonable close
        // runs in an unstructured task, which is not cancelled with it).
        let cancelled = Task {
            try await root.withScope {
                _ = try await ScopedValues.current.service(SelfBoundedKey.self)
                while !Task.isCancelled { await Task.yield() }
            }
        }
        cancelled.cancel()
        try await cancelled.value
        #expect(closed.all == ["closed", "closed in the cancelled task"])
        #expect(failures.all.isEmpty)
        await root.shutdown()
    }

    @Test func aFailedScopesHangingCloseIsReportedToOnCloseErrorByName() async throws {
        struct HandlerFailure: Error {}
        let failures = Recorder<String>()
        let root = ScopeRoot(onCloseError: { failures.record("\($0)") })
        await #expect(throws: HandlerFailure.self) {
            try await root.withScope {
                _ = try await ScopedValues.current.service(HangingSessionKey.self)
                throw HandlerFailure()
            }
        }
        #expect(failures.all.count == 1)
        #expect(failures.all.first?.contains("the close of \(HangingSessionKey.name) did not return") == true)
        await root.shutdown()
    }

    @Test func shutdownEndsWithinTheRootsCloseTimeoutWhenAnAppServicesCloseHangs() async throws {
        let failures = Recorder<String>()
        let root = ScopeRoot(onCloseError: { failures.record("\($0)") }, closeTimeout: .milliseconds(100)) { _ in }
        _ = try await root.withScope { try await ScopedValues.current.service(HangingClientKey.self) }
        await root.shutdown()
        #expect(failures.all.count == 1)
        #expect(failures.all.first?.contains(HangingClientKey.name) == true)
    }
}

struct BoundedShutdownTests {
    @Test func shutdownStopsWaitingForAScopeThatNeverClosesAndReportsIt() async throws {
        let failures = Recorder<String>()
        let root = ScopeRoot(onCloseError: { failures.record("\($0)") })
        // A scope a handler opened and never closed.
        let forgotten = root.openScope()
        let ended = await root.shutdown(abandoningAfter: .milliseconds(100))
        #expect(!ended)
        #expect(failures.all.count == 1)
        #expect(failures.all.first?.contains("1 scopes still open") == true)
        try await forgotten.close(.cancelled)
    }

    @Test func shutdownThatEndsInTimeSaysSo() async throws {
        let root = ScopeRoot()
        try await root.withScope {}
        // A generous bound: the shutdown has nothing to wait for, and the bound only costs time
        // when it is wrong. 5 s failed once on a machine loaded with other builds.
        #expect(await root.shutdown(abandoningAfter: .seconds(60)))
    }
}
