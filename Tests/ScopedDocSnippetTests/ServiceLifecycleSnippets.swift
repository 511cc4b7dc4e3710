import Hummingbird
import Logging
@testable import Scoped
import ScopedServiceLifecycle
import ScopedTestSupport
import ServiceLifecycle
import Testing

// The snippets of ScopedServiceLifecycle's doc comments, verbatim between the markers, with
// stand-ins for what they assume.

func pruningWithTheRootsServicesRunning(
    root: ScopeRoot,
    logger: Logger,
    pruneHistory: () async throws -> Int
) async throws -> Int {
    // SNIPPET-BEGIN
    let deleted = try await root.withRunningServices(logger: logger) {
        try await root.withScope { try await pruneHistory() }
    }
    // SNIPPET-END
    return deleted
}

func servingWithTheRootAsAService(router: Router<BasicRequestContext>, root: ScopeRoot, logger: Logger) async throws {
    // SNIPPET-BEGIN
    var app = Application(router: router)
    let rootService = ScopeRootService(root: root, logger: logger)
    app.addServices(rootService)
    app.beforeServerStarts { try await rootService.ready() }
    try await app.runService()
    // SNIPPET-END
}

struct ServiceLifecycleSnippetTests {
    @Test func theBodyRunsInAScopeOfTheRootAndItsResultComesBack() async throws {
        let root = ScopeRoot()
        let deleted = try await pruningWithTheRootsServicesRunning(root: root, logger: Logger(label: "test")) {
            ScopedValues.current.depth > 0 ? 3 : 0
        }
        #expect(deleted == 3)
        await root.shutdown()
    }
}

/// A server that serves until the graceful shutdown, and says when it was up.
private struct ServerUntilShutdown: Service {
    let up: Recorder<Bool>
    func run() async throws {
        up.record(true)
        try? await gracefulShutdown()
    }
}

/// An app service that says when it was closed.
private enum ClosedAtShutdownKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.app
    static func makeValue() async throws -> Recorder<String> { ScopedValues.current.shutdownLog! }
    static func close(_ log: Recorder<String>, outcome: ScopeOutcome) async throws { log.record("closed") }
}

extension ScopedValues {
    @Entry var shutdownLog: Recorder<String>? = nil
}

struct ServingSnippetTests {
    @Test func anyServerGetsTheRootsLifecycleInALine() async throws {
        let closed = Recorder<String>()
        let root = ScopeRoot(services: [ClosedAtShutdownKey.self]) { $0.shutdownLog = closed }
        let logger = Logger(label: "test")
        let up = Recorder<Bool>()
        let server = ServerUntilShutdown(up: up)
        let running = Task {
            // SNIPPET-BEGIN
            let rootService = ScopeRootService(root: root, logger: logger)
            try await ServiceGroup(services: rootService.services(serving: server), logger: logger).run()
            // SNIPPET-END
        }
        #expect(await eventually(within: .seconds(10)) { up.all == [true] })
        running.cancel()
        _ = await running.result
        // Validation built the app service; the group shut the root down, which closed it.
        #expect(closed.all == ["closed"])
    }
}
