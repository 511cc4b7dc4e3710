import Logging
import Scoped
import ScopedServiceLifecycle
import ScopedTestSupport
import ServiceLifecycle
import Synchronization
import Testing

/// What happened to the ``RecordingService``, in order.
final class ServiceJournal: Sendable {
    private let entries = Mutex<[String]>([])
    func record(_ entry: String) { entries.withLock { $0.append(entry) } }
    var all: [String] { entries.withLock { $0 } }
}

/// An app service that must run: it records when it starts running, when the root closes it
/// and when its run ends.
struct RecordingService: Service {
    let journal: ServiceJournal

    func run() async throws {
        journal.record("run")
        // Until cancelled: as postgres-nio's client runs its pool.
        try? await Task.sleep(for: .seconds(3600))
        journal.record("stopped")
    }
}

extension ScopedValues {
    @Entry var serviceJournal: ServiceJournal = ServiceJournal()
}

enum RecordingServiceKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.app
    static func makeValue() async throws -> RecordingService {
        RecordingService(journal: ScopedValues.current.serviceJournal)
    }
    static func close(_ service: RecordingService, outcome: ScopeOutcome) async throws {
        service.journal.record("closed")
    }
}

/// App services that are swift-service-lifecycle Services run while the application runs.
struct RunningServicesTests {
    @Test func anAppServiceRunsFromItsBuildUntilAfterTheRootShutDown() async throws {
        let journal = ServiceJournal()
        let root = ScopeRoot(services: [RecordingServiceKey.self]) { $0.serviceJournal = journal }
        let handedOff = Signal()
        try await root.withRunningServices(logger: Logger(label: "test")) {
            #expect(await root.validate().isEmpty)
            #expect(await eventually(within: .seconds(5)) { journal.all == ["run"] })
            // Work still running when the application's body returns: the root waits for it
            // before closing the service, and the service keeps running until then.
            _ = try await root.withScope {
                handOff(timeout: .seconds(10)) {
                    await handedOff.wait()
                    journal.record("handed-off work done")
                }
            }
            Task {
                try await Task.sleep(for: .milliseconds(200))
                handedOff.fire()
            }
        }
        #expect(journal.all == ["run", "handed-off work done", "closed", "stopped"])
    }

    @Test func aServiceBuiltBeforeTheRunnerStartsRunsToo() async throws {
        let journal = ServiceJournal()
        let root = ScopeRoot(services: [RecordingServiceKey.self]) { $0.serviceJournal = journal }
        #expect(await root.validate().isEmpty)
        try await root.withRunningServices(logger: Logger(label: "test")) {
            #expect(await eventually(within: .seconds(5)) { journal.all == ["run"] })
        }
        #expect(journal.all == ["run", "closed", "stopped"])
    }
}
