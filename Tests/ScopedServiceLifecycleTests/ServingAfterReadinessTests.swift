import Logging
import Scoped
import ScopedServiceLifecycle
import ScopedTestSupport
import ServiceLifecycle
import Testing

/// A server of any kind, as a service: it records when it starts serving, and when it stops at
/// the graceful shutdown.
struct RecordingServer: Service, CustomStringConvertible {
    let journal: ServiceJournal

    func run() async throws {
        journal.record("server up")
        try? await gracefulShutdown()
        journal.record("server down")
    }

    var description: String { "RecordingServer" }
}

struct BrokenDependency: Error {}

/// An app service whose construction fails: validation reports it.
enum BrokenServiceKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.app
    static func makeValue() async throws -> Int { throw BrokenDependency() }
}

/// An app service that records its build and its close.
enum JournaledServiceKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.app
    static func makeValue() async throws -> ServiceJournal {
        let journal = ScopedValues.current.serviceJournal
        journal.record("built")
        return journal
    }
    static func close(_ journal: ServiceJournal, outcome: ScopeOutcome) async throws { journal.record("closed") }
}

/// `ScopeRootService.services(serving:)`: the root's lifecycle around any server in a line.
struct ServingAfterReadinessTests {
    @Test func theServerStartsOnceTheRootIsReadyAndStopsBeforeItShutsDown() async throws {
        let journal = ServiceJournal()
        let root = ScopeRoot(services: [JournaledServiceKey.self]) { $0.serviceJournal = journal }
        let logger = Logger(label: "test")
        let rootService = ScopeRootService(root: root, logger: logger)
        let server = RecordingServer(journal: journal)
        let group = ServiceGroup(services: rootService.services(serving: server), logger: logger)
        let running = Task { try await group.run() }
        #expect(await eventually(within: .seconds(10)) { journal.all.contains("server up") })
        await group.triggerGracefulShutdown()
        try await running.value
        // Validation built the app service before the server came up; the server stopped
        // before the root shut down and closed the service.
        #expect(journal.all == ["built", "server up", "server down", "closed"])
    }

    @Test func aRootThatFailsValidationStopsTheGroupBeforeTheServerStarts() async throws {
        let journal = ServiceJournal()
        let root = ScopeRoot(services: [BrokenServiceKey.self]) { _ in }
        let logger = Logger(label: "test")
        let rootService = ScopeRootService(root: root, logger: logger)
        let group = ServiceGroup(
            services: rootService.services(serving: RecordingServer(journal: journal)),
            logger: logger
        )
        await #expect(throws: ScopeValidationError.self) { try await group.run() }
        #expect(journal.all.isEmpty, "the server ran: \(journal.all)")
    }
}
