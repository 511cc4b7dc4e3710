import Hummingbird
import Logging
import Scoped
import ScopedServiceLifecycle
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
