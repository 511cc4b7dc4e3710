import Scoped
import ScopedReload
import ScopedServiceLifecycle
import ScopedTestSupport
import SessionTestSupport
import Testing

/// A root that reloads, on each stack: requests in flight finish on the root they started on,
/// and new requests reach the new one.
@Suite(.loadExclusion)
struct ReloadTests {
    @Test(arguments: InsertingStack.allCases, SessionBackend.available)
    func aReloadReachesNewRequestsWhileOnesInFlightFinishOnTheirRoot(
        stack: InsertingStack,
        backend: SessionBackend
    ) async throws {
        let app = ConformanceApp(backend: backend)
        let log = CloseLog()
        let logger = Stack.quietLogger
        try await backend.withRootMaker { makeRoot in
            let first = makeRoot { $0.rootName = "first" }
            try await first.withRunningServices(logger: logger) {
                try #require(await first.validate().isEmpty)
                let reloadable = ReloadableScopeRoot(first)
                try await stack.serve(root: .reloading(reloadable), app: app, log: log) { client in
                    let old = Task { try await client.insert("old", mode: .pausing, requestID: nil) }
                    await app.inFlight.wait()
                    let second = makeRoot { $0.rootName = "second" }
                    try await second.withRunningServices(logger: logger) {
                        let reload = try await reloadable.reload(to: second)
                        let new = try await client.insert("new")
                        guard case .answered(let newAnswer) = new else {
                            Issue.record("\(new)")
                            return
                        }
                        #expect(newAnswer.root == "second")

                        let oldResponse = try await old.value
                        guard case .answered(let oldAnswer) = oldResponse else {
                            Issue.record("\(oldResponse)")
                            return
                        }
                        #expect(oldAnswer.root == "first")
                        #expect(oldAnswer.names.contains("old"))
                        // The previous root shuts down once its request has finished.
                        await reload.previous.shutdown()
                        #expect(first.openScopeCount == 0)
                        #expect(log.all == ["success", "success"])
                        #expect(try await second.withScope { try await backend.session().names() } == ["new", "old"])
                    }
                }
            }
        }
    }
}
