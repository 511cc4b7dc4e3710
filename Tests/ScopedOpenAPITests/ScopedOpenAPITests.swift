import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import OpenAPIHummingbird
import OpenAPIRuntime
import OpenAPIVapor
import Scoped
import ScopedHummingbird
import ScopedOpenAPI
import ScopedVapor
import ScopedTestSupport
import SessionTestSupport
import Testing
import Vapor
import VaporTesting

extension ScopedValues {
    /// What a test request's `X-Tag` header, and its operation, set in its scope.
    @Entry var tag: String? = nil
}

/// The handlers of `Generated/openapi.yaml`, each reading the request's scope.
///
/// They implement swift-openapi-generator's `APIProtocol`, and its generated
/// `registerHandlers(on:serverURL:configuration:middlewares:)` registers them.
struct EchoAPI: APIProtocol {
    func echo(_ input: Operations.Echo.Input) async throws -> Operations.Echo.Output {
        let echo = "\(ScopedValues.current.requestID ?? "-") \(ScopedValues.current.tag ?? "-")"
        _ = try await ScopedValues.current.service(LoggedResourceKey.self)
        return .ok(.init(body: .plainText(HTTPBody(echo))))
    }

    func lines(_ input: Operations.Lines.Input) async throws -> Operations.Lines.Output {
        _ = try await ScopedValues.current.service(LoggedResourceKey.self)
        return .ok(.init(body: .plainText(HTTPBody(Lines(count: 3), length: .unknown, iterationBehavior: .single))))
    }

    func endless(_ input: Operations.Endless.Input) async throws -> Operations.Endless.Output {
        let lines = Lines(count: .max, pause: .milliseconds(5))
        return .ok(.init(body: .plainText(HTTPBody(lines, length: .unknown, iterationBehavior: .single))))
    }

    /// Lines produced as the transport reads them, each reading the request's resource.
    struct Lines: AsyncSequence, Sendable {
        let count: Int
        var pause: Duration? = nil

        func makeAsyncIterator() -> Iterator { Iterator(count: count, pause: pause) }

        struct Iterator: AsyncIteratorProtocol {
            let count: Int
            let pause: Duration?
            var line = 0

            mutating func next() async throws -> ArraySlice<UInt8>? {
                guard line < count else { return nil }
                defer { line += 1 }
                _ = try await ScopedValues.current.service(LoggedResourceKey.self)
                if let pause { try await Task.sleep(for: pause) }
                return ArraySlice("line \(line)\n".utf8)
            }
        }
    }
}

/// The transports the tests run the API on.
enum Transport: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case hummingbird, vapor
    var testDescription: String { rawValue }

    /// Serves what `register` registers on a free loopback port and runs `body` with the port.
    ///
    /// With `outerRoot`, every request first runs through the framework's own request scope on
    /// that root, which builds the request's ``LoggedResourceKey`` before the handler runs.
    func serve(
        _ register: (any ServerTransport) throws -> Void,
        behindRequestScopesOn outerRoot: ScopeRoot? = nil,
        _ body: @Sendable (Int) async throws -> Void
    ) async throws {
        switch self {
        case .hummingbird:
            let router = Hummingbird.Router()
            if let outerRoot {
                router.add(middleware: ScopedHummingbird.RequestScopeMiddleware(root: outerRoot))
                router.add(middleware: BuildsTheResource())
            }
            try register(router)
            try await Hummingbird.Application(router: router)
                .test(.live) { client in
                    try await body(try #require(client.port))
                }
        case .vapor:
            let app = try await Vapor.Application.make(.testing)
            app.logger.logLevel = .critical
            if let outerRoot {
                app.middleware.use(ScopedVapor.RequestScopeMiddleware(root: outerRoot))
                app.middleware.use(BuildsTheResource())
            }
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

/// Builds the request's resource in the framework's request scope, before the handler runs.
struct BuildsTheResource: RouterMiddleware, AsyncMiddleware {
    typealias Context = BasicRequestContext

    func handle(
        _ request: Hummingbird.Request,
        context: BasicRequestContext,
        next: @concurrent (Hummingbird.Request, BasicRequestContext) async throws -> Hummingbird.Response
    ) async throws -> Hummingbird.Response {
        _ = try await ScopedValues.current.service(LoggedResourceKey.self)
        return try await next(request, context)
    }

    func respond(to request: Vapor.Request, chainingTo next: any AsyncResponder) async throws -> Vapor.Response {
        _ = try await ScopedValues.current.service(LoggedResourceKey.self)
        return try await next.respond(to: request)
    }
}

/// Generated handlers in request scopes, under swift-openapi-hummingbird and
/// swift-openapi-vapor.
struct RequestScopeServerMiddlewareTests {
    private func makeAPI() -> ((any ServerTransport) throws -> Void, ScopeRoot, CloseLog) {
        let log = CloseLog()
        let root = ScopeRoot { $0.closeLog = log }
        let middleware = RequestScopeServerMiddleware(root: root) { values, request, _, operationID in
            values.tag = request.headerFields[HTTPField.Name("X-Tag")!].map { "\(operationID):\($0)" }
            values.failsToCommit = request.headerFields[HTTPField.Name("X-Fail-Commit")!] != nil
        }
        return ({ try EchoAPI().registerHandlers(on: $0, middlewares: [middleware]) }, root, log)
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

    /// Behind the framework's own request scope on the same root, the handler runs in that
    /// scope: the resource the framework's middleware built is the one the handler reads, built
    /// and closed once, and the OpenAPI middleware's `update` still reaches the handler.
    @Test(arguments: Transport.allCases)
    func behindAFrameworksRequestScopeTheHandlerJoinsItInsteadOfOpeningASibling(transport: Transport) async throws {
        let (api, root, log) = makeAPI()
        try await transport.serve(api, behindRequestScopesOn: root) { port in
            let response = try await RawHTTPConnection(port: port)
                .exchange("GET /echo HTTP/1.1\r\nHost: test\r\nConnection: close\r\nX-Tag: blue\r\n\r\n")
            #expect(response.hasPrefix("HTTP/1.1 200 OK"))
            #expect(response.hasSuffix(" echo:blue"))
            #expect(log.all == ["success"])
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
