import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import OpenAPIHummingbird
import OpenAPIRuntime
import OpenAPIVapor
import Scoped
import ScopedOpenAPI
import ScopedTestSupport
import SessionTestSupport
import Testing
import Vapor
import VaporTesting

extension ScopedValues {
    /// What a test request's `X-Tag` header, and its operation, set in its scope.
    @Entry var tag: String? = nil
}

/// A small API registered on a transport the way swift-openapi-generator's
/// `registerHandlers(on:serverURL:configuration:middlewares:)` does it: each operation's handler
/// behind the middlewares, first to last. (The glue is written out here so that the test builds
/// without the generator's plugin; the transports and the middleware are the real ones.)
struct EchoHandler {
    typealias Handler =
        @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)

    func registerHandlers(
        on transport: any ServerTransport,
        serverURL: URL = .defaultOpenAPIServerURL,
        configuration: Configuration = .init(),
        middlewares: [any ServerMiddleware] = []
    ) throws {
        try register(on: transport, middlewares, .get, "/echo", operationID: "echo") { _, _, _ in
            let echo = "\(ScopedValues.current.requestID ?? "-") \(ScopedValues.current.tag ?? "-")"
            _ = try await ScopedValues.current[LoggedResourceKey.self]
            return (HTTPResponse(status: .ok), HTTPBody(echo))
        }
        try register(on: transport, middlewares, .get, "/lines", operationID: "lines") { _, _, _ in
            _ = try await ScopedValues.current[LoggedResourceKey.self]
            return (
                HTTPResponse(status: .ok), HTTPBody(Self.lines(count: 3), length: .unknown, iterationBehavior: .single)
            )
        }
        try register(on: transport, middlewares, .get, "/endless", operationID: "endless") { _, _, _ in
            (
                HTTPResponse(status: .ok),
                HTTPBody(Self.lines(count: .max, pause: .milliseconds(5)), length: .unknown, iterationBehavior: .single)
            )
        }
    }

    /// Lines produced as the transport reads them, each reading the request's resource.
    private static func lines(count: Int, pause: Duration? = nil) -> Lines { Lines(count: count, pause: pause) }

    struct Lines: AsyncSequence, Sendable {
        let count: Int
        let pause: Duration?

        func makeAsyncIterator() -> Iterator { Iterator(count: count, pause: pause) }

        struct Iterator: AsyncIteratorProtocol {
            let count: Int
            let pause: Duration?
            var line = 0

            mutating func next() async throws -> ArraySlice<UInt8>? {
                guard line < count else { return nil }
                defer { line += 1 }
                _ = try await ScopedValues.current[LoggedResourceKey.self]
                if let pause { try await Task.sleep(for: pause) }
                return ArraySlice("line \(line)\n".utf8)
            }
        }
    }

    private func register(
        on transport: any ServerTransport,
        _ middlewares: [any ServerMiddleware],
        _ method: HTTPRequest.Method,
        _ path: String,
        operationID: String,
        handler: @escaping Handler
    ) throws {
        var next = handler
        for middleware in middlewares.reversed() {
            let tail = next
            next = { request, body, metadata in
                try await middleware.intercept(
                    request,
                    body: body,
                    metadata: metadata,
                    operationID: operationID,
                    next: tail
                )
            }
        }
        try transport.register(next, method: method, path: path)
    }
}

/// The transports the tests run the API on.
enum Transport: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case hummingbird, vapor
    var testDescription: String { rawValue }

    /// Serves what `register` registers on a free loopback port and runs `body` with the port.
    func serve(
        _ register: (any ServerTransport) throws -> Void,
        _ body: @Sendable (Int) async throws -> Void
    ) async throws {
        switch self {
        case .hummingbird:
            let router = Hummingbird.Router()
            try register(router)
            try await Hummingbird.Application(router: router)
                .test(.live) { client in
                    try await body(try #require(client.port))
                }
        case .vapor:
            let app = try await Vapor.Application.make(.testing)
            app.logger.logLevel = .critical
            do {
                try register(VaporTransport(routesBuilder: app))
                try await app.server.start(address: .hostname("127.0.0.1", port: 0))
                try await body(try #require(app.http.server.shared.localAddress?.port))
                await app.server.shutdown()
                try await app.asyncShutdown()
            } catch {
                await app.server.shutdown()
                try? await app.asyncShutdown()
                throw error
            }
        }
    }
}

/// Generated-style handlers in request scopes, under swift-openapi-hummingbird and
/// swift-openapi-vapor.
struct RequestScopeServerMiddlewareTests {
    private func makeAPI() -> ((any ServerTransport) throws -> Void, ScopeRoot, CloseLog) {
        let log = CloseLog()
        let root = ScopeRoot { $0.closeLog = log }
        let middleware = RequestScopeServerMiddleware(root: root) { values, request, _, operationID in
            values.tag = request.headerFields[HTTPField.Name("X-Tag")!].map { "\(operationID):\($0)" }
            values.failsToCommit = request.headerFields[HTTPField.Name("X-Fail-Commit")!] != nil
        }
        return ({ try EchoHandler().registerHandlers(on: $0, middlewares: [middleware]) }, root, log)
    }

    @Test(arguments: Transport.allCases)
    func aHandlerReadsItsRequestsScopeWhichClosesBeforeAShortResponse(transport: Transport) async throws {
        let (api, root, log) = makeAPI()
        try await transport.serve(api) { port in
            let connection = try await RawHTTPConnection(port: port)
            let response = try await connection.exchange(
                "GET /echo HTTP/1.1\r\nHost: test\r\nConnection: close\r\nX-Request-ID: abc.1\r\nX-Tag: blue\r\n\r\n"
            )
            #expect(response.hasPrefix("HTTP/1.1 200 OK"))
            #expect(response.hasSuffix("abc.1 echo:blue"))
            // The scope had closed when the response was sent.
            #expect(log.all == ["success"])

            let invalidID = try await RawHTTPConnection(port: port)
                .exchange("GET /echo HTTP/1.1\r\nHost: test\r\nConnection: close\r\nX-Request-ID: no spaces\r\n\r\n")
            let id = try #require(invalidID.split(separator: "\r\n\r\n").last?.split(separator: " ").first)
            #expect(id.wholeMatch(of: /[0-9a-f]{32}/) != nil, "a new ID instead of an invalid one: \(id)")
        }
        #expect(root.openScopeCount == 0)
    }

    @Test(arguments: Transport.allCases)
    func aCommitThatFailsIsTheRequestsErrorForAShortBody(transport: Transport) async throws {
        let (api, root, log) = makeAPI()
        try await transport.serve(api) { port in
            let response = try await RawHTTPConnection(port: port)
                .exchange("GET /echo HTTP/1.1\r\nHost: test\r\nConnection: close\r\nX-Fail-Commit: 1\r\n\r\n")
            #expect(response.hasPrefix("HTTP/1.1 500"))
        }
        #expect(log.all == ["success"])
        #expect(root.openScopeCount == 0)
    }

    @Test(arguments: Transport.allCases)
    func aStreamedBodyIsProducedInTheScopeWhichClosesOnceBeforeItsLastChunk(transport: Transport) async throws {
        let (api, root, log) = makeAPI()
        try await transport.serve(api) { port in
            let response = try await RawHTTPConnection(port: port)
                .exchange("GET /lines HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n")
            #expect(RawHTTPConnection.chunkedBody(of: response) == "line 0\nline 1\nline 2\n")
            #expect(log.all == ["success"])

            let failing = try await RawHTTPConnection(port: port)
                .exchange("GET /lines HTTP/1.1\r\nHost: test\r\nConnection: close\r\nX-Fail-Commit: 1\r\n\r\n")
            #expect(failing.contains("line 1\n"))
            #expect(!failing.contains("line 2"))
            #expect(RawHTTPConnection.chunkedBody(of: failing) == nil)
        }
        #expect(log.all == ["success", "success"])
        #expect(root.openScopeCount == 0)
    }

    @Test(arguments: Transport.allCases)
    func aClientThatGoesAwayMidBodyClosesTheScopeAsCancelled(transport: Transport) async throws {
        let (api, root, log) = makeAPI()
        try await transport.serve(api) { port in
            let received = try await RawHTTPConnection(port: port)
                .exchange("GET /endless HTTP/1.1\r\nHost: test\r\n\r\n") { $0.contains("line 3\n") }
            #expect(received.hasPrefix("HTTP/1.1 200 OK"))
            #expect(await eventually { root.openScopeCount == 0 })
        }
        #expect(log.all == ["cancelled"])
    }
}
