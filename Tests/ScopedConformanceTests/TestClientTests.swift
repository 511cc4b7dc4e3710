import Foundation
import GRPCCore
import GRPCInProcessTransport
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Scoped
import ScopedTesting
import SessionTestSupport
import Testing
import Vapor
import VaporTesting

/// The `.scoped { }` trait on each stack.
///
/// A test's overrides reach the requests it sends through the framework's own test client, and
/// a live-only entry a request reads fails the test. The root is made inside the test, as an
/// application's set-up makes it.
struct TestClientTests {
    @Test(.scoped { $0.rootName = "mocked" }, arguments: Stack.allCases)
    func aTestsOverrideReachesRequestsSentThroughTheFrameworksTestClient(stack: Stack) async throws {
        try await SessionBackend.sqlite.withUnstartedRoot { root in
            try await stack.withTestClient(root: root, app: ConformanceApp(backend: .sqlite)) { client in
                let response = try await client.insert("mocked")
                guard case .answered(let answer) = response else {
                    Issue.record("\(response)")
                    return
                }
                #expect(answer.root == "mocked")
                #expect(answer.names == ["mocked"])
            }
            await root.shutdown()
        }
    }

    @Test(.scoped(), arguments: Stack.allCases)
    func aLiveOnlyEntryReadByARequestFailsTheTest(stack: Stack) async throws {
        try await SessionBackend.sqlite.withUnstartedRoot { root in
            try await withKnownIssue {
                try await stack.withTestClient(root: root, app: ConformanceApp(backend: .sqlite)) { client in
                    let response = try await client.insert("audited", mode: .auditing, requestID: nil)
                    guard case .answered(let answer) = response else {
                        Issue.record("\(response)")
                        return
                    }
                    // The stand-in answered: the live default never ran.
                    #expect(answer.audit == "stand-in")
                }
            } matching: { issue in
                issue.comments.contains { $0.rawValue.contains("'auditTrail' is live-only") }
            }
            await root.shutdown()
        }
    }
}

extension Stack {
    /// Runs `body` with a client of `app` that sends its requests through the framework's own
    /// test client, in process: Hummingbird's `.router` test, VaporTesting's in-memory tester,
    /// grpc-swift's in-process transport.
    func withTestClient(
        root: ScopeRoot,
        app: ConformanceApp,
        _ body: @Sendable (any ConformanceClient) async throws -> Void
    ) async throws {
        let log = CloseLog()
        switch self {
        case .hummingbird, .openAPIOnHummingbird:
            let router = try makeRouter(root: .fixed(root), app: app, log: log)
            try await Hummingbird.Application(router: router)
                .test(.router) { client in
                    try await body(HummingbirdTestingClient(client: client))
                }
        case .vapor, .openAPIOnVapor:
            let application = try await Vapor.Application.make(.testing)
            application.logger.logLevel = .critical
            do {
                try configure(application, root: .fixed(root), app: app, log: log)
                try await body(VaporTestingClient(tester: try application.testing()))
            } catch {
                try? await application.asyncShutdown()
                throw error
            }
            try await application.asyncShutdown()
        case .grpc:
            let transport = InProcessTransport()
            let server = makeGRPCServer(transport: transport.server, root: .fixed(root), app: app, log: log)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await server.serve() }
                defer { server.beginGracefulShutdown() }
                try await withGRPCClient(transport: transport.client) { client in
                    try await body(GRPCConformanceClient(client: client))
                }
            }
        }
    }
}

/// Inserts through HummingbirdTesting's client; a framework test client has no socket to leave.
struct HummingbirdTestingClient: ConformanceClient {
    let client: any TestClientProtocol

    func insert(_ name: String, mode: InsertMode, requestID: String?) async throws -> InsertResponse {
        var headers = HTTPFields()
        if let requestID { headers[HTTPField.Name("X-Request-ID")!] = requestID }
        let response = try await client.execute(
            uri: "/items/\(name)?mode=\(mode.rawValue)",
            method: .post,
            headers: headers
        )
        guard (200..<300).contains(response.status.code) else { return .refused }
        return .answered(try JSONDecoder().decode(Answer.self, from: Data(String(buffer: response.body).utf8)))
    }

    func export(_ name: String, chunks: Int, lengthKnown: Bool) async throws -> ExportResponse {
        throw Unsupported()
    }

    func leaveMidStream(_ name: String) async throws -> [String] { throw Unsupported() }
}

/// Inserts through VaporTesting's in-memory tester.
struct VaporTestingClient: ConformanceClient {
    let tester: any TestingApplicationTester

    func insert(_ name: String, mode: InsertMode, requestID: String?) async throws -> InsertResponse {
        var headers = HTTPHeaders()
        if let requestID { headers.add(name: "X-Request-ID", value: requestID) }
        let response = try await tester.performTest(
            request: TestingHTTPRequest(
                method: .POST,
                url: URI(string: "/items/\(name)?mode=\(mode.rawValue)"),
                headers: headers,
                body: ByteBuffer()
            )
        )
        guard (200..<300).contains(response.status.code) else { return .refused }
        return .answered(try JSONDecoder().decode(Answer.self, from: Data(String(buffer: response.body).utf8)))
    }

    func export(_ name: String, chunks: Int, lengthKnown: Bool) async throws -> ExportResponse {
        throw Unsupported()
    }

    func leaveMidStream(_ name: String) async throws -> [String] { throw Unsupported() }
}

/// What a framework test client throws for an operation only a socket can send.
struct Unsupported: Error {}
