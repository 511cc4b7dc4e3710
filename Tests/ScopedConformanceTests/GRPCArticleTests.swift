import GRPCCore
import GRPCNIOTransportHTTP2
import Scoped
import ScopedServiceLifecycle
import ScopedTestSupport
import ServiceLifecycle
import SessionTestSupport
import Testing

// The root's life in a gRPC application, as the ScopedGRPC article shows it
// (ScopedGRPCTests checks the article against the marked code here).

// SNIPPET-BEGIN
/// A gRPC server as a swift-service-lifecycle `Service`: it serves until the group's graceful
/// shutdown, which it passes on to the server, so RPCs in flight finish.
struct GRPCServerService: Service {
    let server: GRPCServer<HTTP2ServerTransport.Posix>

    func run() async throws {
        try await withGracefulShutdownHandler {
            try await server.serve()
        } onGracefulShutdown: {
            server.beginGracefulShutdown()
        }
    }
}
// SNIPPET-END

struct GRPCArticleTests {
    @Test func aGRPCApplicationRunsItsRootAsTheArticleShows() async throws {
        let log = CloseLog()
        try await SessionBackend.sqlite.withUnstartedRoot { root in
            let server = Stack.grpc.makeGRPCServer(root: .fixed(root), app: ConformanceApp(backend: .sqlite), log: log)
            let logger = Stack.quietLogger
            let running = Task {
                // SNIPPET-BEGIN
                let rootService = ScopeRootService(root: root, logger: logger)
                try await ServiceGroup(
                    services: rootService.services(serving: GRPCServerService(server: server)),
                    logger: logger
                )
                .run()
                // SNIPPET-END
            }
            try await withClient(of: server) { client in
                let response = try await client.insert("first")
                guard case .answered(let answer) = response else {
                    Issue.record("\(response)")
                    return
                }
                #expect(answer.names == ["first"])
            }
            running.cancel()
            _ = await running.result
            // The group shut the root down: the request's close ran, and the root is closed.
            #expect(log.all == ["success"])
            await #expect(throws: ScopedError.self) {
                try await root.withScope { try await SessionBackend.sqlite.session() }
            }
        }
    }
}
