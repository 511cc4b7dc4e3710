@testable import Scoped
import ScopedTestSupport
import Testing

/// Scopes opened and closed by hand.
struct ScopeTests {
    @Test func workRunInAHandOpenedScopeSharesItsServicesUntilItCloses() async throws {
        let (root, probe) = makeRoot()
        let scope = root.openScope { $0.serviceLabel = "request" }
        #expect(root.openScopeCount == 1)
        let first = try await scope.run { try await ScopedValues.current.service(SessionKey.self) }
        // A second piece of the same work, later and from another task, sees the same service.
        let second = try await Task { try await scope.run { try await ScopedValues.current.service(SessionKey.self) } }
            .value
        #expect(first === second)
        #expect(first.label == "request")
        #expect(probe.events == ["build \(SessionKey.name)"])

        try await scope.close(.success)
        #expect(scope.isClosed)
        #expect(root.openScopeCount == 0)
        #expect(probe.events.last == "close \(SessionKey.name) success")
        await #expect(throws: ScopedError.scopeEnded(entry: SessionKey.name)) {
            try await scope.run { try await ScopedValues.current.service(SessionKey.self) }
        }
    }

    @Test func onlyTheFirstOfConcurrentClosesClosesAndItsOutcomeIsTheOneToldToServices() async throws {
        let (root, probe) = makeRoot()
        let scope = root.openScope()
        _ = try await scope.run { try await ScopedValues.current.service(SessionKey.self) }
        try await scope.close(.cancelled)
        await withTaskGroup { group in
            for _ in 0..<20 { group.addTask { try? await scope.close(.success) } }
        }
        #expect(probe.events.filter { $0.hasPrefix("close") } == ["close \(SessionKey.name) cancelled"])
        #expect(root.openScopeCount == 0)
    }

    @Test func aSuccessfulCloseThrowsItsServicesCloseFailures() async throws {
        let reported = Recorder<String>()
        let root = ScopeRoot(onCloseError: { reported.record("\($0.outcome)") })
        let scope = root.openScope()
        _ = try await scope.run { try await ScopedValues.current.service(FailingCloseKey.self) }
        await #expect(throws: ScopeCloseError.self) { try await scope.close(.success) }
        #expect(reported.all.isEmpty)

        let failed = root.openScope()
        _ = try await failed.run { try await ScopedValues.current.service(FailingCloseKey.self) }
        try await failed.close(.cancelled)
        #expect(reported.all == ["cancelled"])
    }

    @Test func aScopeReleasedWithoutBeingClosedClosesItselfAsCancelled() async throws {
        let (root, probe) = makeRoot()
        do {
            let scope = root.openScope()
            _ = try await scope.run { try await ScopedValues.current.service(SessionKey.self) }
        }
        await root.shutdown()  // returns only once the abandoned scope has closed
        #expect(root.openScopeCount == 0)
        #expect(probe.events == ["build \(SessionKey.name)", "close \(SessionKey.name) cancelled"])
    }

    @Test func anUpdateThatThrowsOpensNoScope() {
        let root = ScopeRoot()
        #expect(throws: CloseFailure(name: "update")) {
            _ = try root.openScope { _ in throw CloseFailure(name: "update") }
        }
        #expect(root.openScopeCount == 0)
    }
}
