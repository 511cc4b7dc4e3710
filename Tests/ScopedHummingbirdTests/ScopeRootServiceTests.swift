import Hummingbird
import HummingbirdTesting
import Logging
import Scoped
import ScopedHummingbird
import ScopedServiceLifecycle
import ScopedTestSupport
import ServiceLifecycle
import Testing

extension ScopedValues {
    @Entry var lifeEvents: Recorder<String>? = nil
}

/// An app service that serves only while it runs, as postgres-nio's client does.
struct Ticker: Service {
    let events: Recorder<String>
    let running = Signal()

    func run() async throws {
        running.fire()
        events.record("run")
        try? await Task.sleep(for: .seconds(3600))
        events.record("run returned")
    }

    func use() {
        events.record(running.hasFired ? "used while running" : "used before run")
    }
}

enum TickerKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.app
    static func makeValue() async throws -> Ticker { Ticker(events: ScopedValues.current.lifeEvents!) }
    static func close(_ ticker: Ticker, outcome: ScopeOutcome) async throws { ticker.events.record("ticker closed") }
}

/// Uses the ticker the moment it has it, as a database's migrations use the client.
enum TickerUserKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.app
    static func makeValue() async throws -> Int {
        try await ScopedValues.current.service(TickerKey.self).use()
        return 1
    }
}

enum UnbuildableKey: ScopedServiceKey {
    struct Unreachable: Error {}
    static let lifetime = ScopedLifetime.app
    static var name: String { "unbuildable" }
    static func makeValue() async throws -> Int { throw Unreachable() }
}

private func quietLogger() -> Logger {
    var logger = Logger(label: "root")
    logger.logLevel = .critical
    return logger
}

struct ScopeRootServiceTests {
    @Test func aRootThatFailsValidationStopsTheApplicationBeforeItsPortBinds() async throws {
        let root = ScopeRoot(services: [UnbuildableKey.self])
        let bound = Signal()
        var application = Application(
            router: Router(),
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { _ in bound.fire() },
            logger: quietLogger()
        )
        application.addScopeRoot(ScopeRootService(root: root, logger: quietLogger()))
        let error = await #expect(throws: ScopeValidationError.self) { try await application.run() }
        #expect(error?.problems.map(\.entry) == ["unbuildable"])
        #expect(!bound.hasFired)
    }

    @Test func runningServicesRunBeforeUseAndStopAfterTheRootHasDrainedAndClosed() async throws {
        let events = Recorder<String>()
        let root = ScopeRoot(services: [TickerKey.self, TickerUserKey.self]) {
            $0.lifeEvents = events
        }
        let router = Router()
        router.add(middleware: RequestScopeMiddleware(root: root))
        router.get("/later") { _, _ in
            handOff(timeout: .seconds(5)) {
                try await Task.sleep(for: .milliseconds(200))
                events.record("handed-off work done")
            }
            return "accepted"
        }
        var application = Application(
            router: router,
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            logger: quietLogger()
        )
        application.addScopeRoot(ScopeRootService(root: root, logger: quietLogger()))
        try await application.test(.live) { client in
            #expect(events.all == ["run", "used while running"])
            let response = try await client.execute(uri: "/later", method: .get)
            #expect(String(buffer: response.body) == "accepted")
        }
        #expect(events.all == ["run", "used while running", "handed-off work done", "ticker closed", "run returned"])
        #expect(root.openScopeCount == 0)
    }

    @Test func readyWaitsForValidationAndCanBeCancelled() async throws {
        let service = ScopeRootService(root: ScopeRoot(startingFrom: ScopedValues()) { _ in }, logger: quietLogger())
        let waiter = Task { try await service.ready() }
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
    }
}
