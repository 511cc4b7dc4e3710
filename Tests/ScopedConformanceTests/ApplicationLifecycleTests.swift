import Scoped
import ScopedTestSupport
import SessionTestSupport
import Synchronization
import Testing

/// The root's life in a whole application on each stack, as the adapter's article sets it up:
/// validated before the port binds, its running app services running, shut down after the
/// server has finished its requests.
@Suite(.loadExclusion)
struct ApplicationLifecycleTests {
    struct Unbuildable: Error {}

    enum UnbuildableKey: ScopedServiceKey {
        static let lifetime = ScopedLifetime.app
        static func makeValue() async throws -> Int { throw Unbuildable() }
    }

    @Test(arguments: Stack.allCases)
    func aRootThatFailsValidationStopsTheApplicationBeforeItServes(stack: Stack) async throws {
        let root = ScopeRoot(services: [UnbuildableKey.self]) { _ in }
        let served = Signal()
        let error = await #expect(throws: ScopeValidationError.self) {
            try await stack.runApplication(root: root, app: ConformanceApp(backend: .sqlite), log: CloseLog()) { _ in
                served.fire()
            }
        }
        #expect(error?.problems.map(\.entry) == ["unbuildable"])
        #expect(!served.hasFired)
    }

    /// On PostgreSQL the root's client is postgres-nio's, which leases no connection before its
    /// `run()` has started: a request commits only when the application runs it.
    @Test(arguments: Stack.allCases, SessionBackend.available)
    func theRootsRunningServicesRunAndItShutsDownWithTheApplication(
        stack: Stack,
        backend: SessionBackend
    ) async throws {
        let log = CloseLog()
        try await backend.withUnstartedRoot(leaseTimeout: .seconds(3)) { root in
            try await stack.runApplication(root: root, app: ConformanceApp(backend: backend), log: log) { client in
                let response = try await client.insert("first")
                guard case .answered(let answer) = response else {
                    Issue.record("\(response)")
                    return
                }
                #expect(answer.names == ["first"])
            }
            #expect(log.all == ["success"])
            // The root shut down with the application: its services are closed.
            await #expect(throws: ScopedError.self) { try await root.withScope { try await backend.session() } }
        }
    }

    @Test(arguments: Stack.allCases, SessionBackend.available)
    func aGracefulShutdownFinishesTheRequestsInFlightBeforeTheRootShutsDown(
        stack: Stack,
        backend: SessionBackend
    ) async throws {
        let app = ConformanceApp(backend: backend)
        let log = CloseLog()
        let inFlight = Mutex<Task<InsertResponse, any Error>?>(nil)
        try await backend.withUnstartedRoot { root in
            try await stack.runApplication(root: root, app: app, log: log) { client in
                inFlight.withLock { $0 = Task { try await client.insert("late", mode: .pausing, requestID: nil) } }
                // The handler has inserted and pauses for a second; returning now shuts the
                // application down with the request in flight.
                await app.inFlight.wait()
            }
            let request = try #require(inFlight.withLock { $0 })
            let response = try await request.value
            guard case .answered(let answer) = response else {
                Issue.record("\(response)")
                return
            }
            #expect(answer.names == ["late"])
            #expect(log.all == ["success"])
            #expect(root.openScopeCount == 0)
        }
    }
}
