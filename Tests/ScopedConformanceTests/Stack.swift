import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import OpenAPIHummingbird
import OpenAPIRuntime
import OpenAPIVapor
import Scoped
import ScopedReload
import ScopedGRPC
import ScopedHummingbird
import ScopedOpenAPI
import ScopedVapor
import SessionTestSupport
import Testing
import Vapor

/// A stack Scoped adapts, serving the conformance app on a free loopback port with the
/// adapter set up as its article says.
enum Stack: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case hummingbird
    case vapor
    case openAPIOnHummingbird
    case openAPIOnVapor
    case grpc

    var testDescription: String { rawValue }

    /// Serves `app` with every request in a scope of `root` whose ``CommitProbeKey`` records in
    /// `log`, and runs `body` with a client of the server.
    func serve(
        root: Roots,
        app: ConformanceApp,
        log: CloseLog,
        _ body: @Sendable (any ConformanceClient) async throws -> Void
    ) async throws {
        switch self {
        case .hummingbird, .openAPIOnHummingbird:
            try await Hummingbird.Application(router: try makeRouter(root: root, app: app, log: log))
                .test(.live) { client in
                    try await body(HTTPConformanceClient(port: try #require(client.port)))
                }
        case .vapor, .openAPIOnVapor:
            let application = try await Vapor.Application.make(.testing)
            application.logger.logLevel = .critical
            do {
                try configure(application, root: root, app: app, log: log)
                try await application.server.start(address: .hostname("127.0.0.1", port: 0))
                try await body(
                    HTTPConformanceClient(port: try #require(application.http.server.shared.localAddress?.port))
                )
                await application.server.shutdown()
                try await application.asyncShutdown()
            } catch {
                await application.server.shutdown()
                try? await application.asyncShutdown()
                throw error
            }
        case .grpc:
            let server = makeGRPCServer(root: root, app: app, log: log)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await server.serve() }
                defer { server.beginGracefulShutdown() }
                try await withClient(of: server, body)
            }
        }
    }

    /// The router of a Hummingbird stack: its request scopes and the app's routes.
    func makeRouter(root: Roots, app: ConformanceApp, log: CloseLog) throws
        -> Hummingbird.Router<BasicRequestContext>
    {
        let router = Hummingbird.Router()
        if self == .openAPIOnHummingbird {
            try ConformanceAPI(app: app).registerHandlers(on: router, middlewares: [Self.openAPIScopes(root, log)])
        } else {
            router.add(middleware: RequestIDMiddleware())
            router.add(
                middleware: root.hummingbirdScopes { values, _, _ in values.conformanceLog = log }
            )
            Self.route(router, app)
        }
        return router
    }

    /// Gives a Vapor stack's application its request scopes and the app's routes.
    func configure(_ application: Vapor.Application, root: Roots, app: ConformanceApp, log: CloseLog) throws {
        if self == .openAPIOnVapor {
            try ConformanceAPI(app: app)
                .registerHandlers(
                    on: VaporTransport(routesBuilder: application),
                    middlewares: [Self.openAPIScopes(root, log)]
                )
        } else {
            application.middleware.use(
                root.vaporScopes { values, _ in values.conformanceLog = log }
            )
            Self.route(application, app)
        }
    }

    /// The gRPC stack's server, not yet serving.
    func makeGRPCServer(root: Roots, app: ConformanceApp, log: CloseLog) -> GRPCServer<HTTP2ServerTransport.Posix> {
        makeGRPCServer(
            transport: .http2NIOPosix(address: .ipv4(host: "127.0.0.1", port: 0), transportSecurity: .plaintext),
            root: root,
            app: app,
            log: log
        )
    }

    /// The gRPC stack's server on `transport`, not yet serving.
    func makeGRPCServer<Transport: GRPCCore.ServerTransport>(
        transport: Transport,
        root: Roots,
        app: ConformanceApp,
        log: CloseLog
    ) -> GRPCServer<Transport> {
        GRPCServer(
            transport: transport,
            services: [ConformanceService(app: app)],
            interceptors: [root.grpcScopes { values, _, _ in values.conformanceLog = log }]
        )
    }

    private static func openAPIScopes(_ root: Roots, _ log: CloseLog) -> RequestScopeServerMiddleware {
        root.openAPIScopes { values, _, _, _ in values.conformanceLog = log }
    }

    // MARK: Hummingbird

    private static func route(_ router: Hummingbird.Router<BasicRequestContext>, _ app: ConformanceApp) {
        router.post("/items/:name") { request, context -> Hummingbird.Response in
            let name = try context.parameters.require("name")
            do {
                let mode = request.uri.queryParameters["mode"].flatMap { InsertMode(rawValue: String($0)) } ?? .plain
                let answer = try await app.insert(name, mode: mode)
                return Hummingbird.Response(
                    status: .ok,
                    headers: [.contentType: "application/json"],
                    body: .init(byteBuffer: ByteBuffer(bytes: try JSONEncoder().encode(answer)))
                )
            } catch is Refused {
                throw HTTPError(.conflict)
            }
        }
        router.get("/export/:name") { request, context -> Hummingbird.Response in
            let name = try context.parameters.require("name")
            let chunks = try #require(request.uri.queryParameters["chunks"].flatMap { Int($0) })
            let length = request.uri.queryParameters["known"] == "true" ? chunks * ConformanceApp.chunkSize : nil
            try await app.beginExport(name)
            return Hummingbird.Response(
                status: .ok,
                body: ResponseBody(contentLength: length) { writer in
                    for _ in 0..<chunks { try await writer.write(ByteBuffer(bytes: try await app.chunk(of: name))) }
                    try await writer.finish(nil)
                }
            )
        }
        router.get("/endless/:name") { _, context -> Hummingbird.Response in
            try await app.beginExport(try context.parameters.require("name"))
            return Hummingbird.Response(
                status: .ok,
                body: ResponseBody { writer in
                    for number in 0... { try await writer.write(ByteBuffer(string: try await app.line(number))) }
                }
            )
        }
    }

    // MARK: Vapor

    private static func route(_ application: Vapor.Application, _ app: ConformanceApp) {
        application.post("items", ":name") { request async throws -> Vapor.Response in
            let name = try request.parameters.require("name")
            do {
                let mode = request.query[String.self, at: "mode"].flatMap(InsertMode.init(rawValue:)) ?? .plain
                let answer = try await app.insert(name, mode: mode)
                return Vapor.Response(
                    status: .ok,
                    headers: ["Content-Type": "application/json"],
                    body: .init(data: try JSONEncoder().encode(answer))
                )
            } catch is Refused {
                throw Abort(.conflict)
            }
        }
        application.get("export", ":name") { request async throws -> Vapor.Response in
            let name = try request.parameters.require("name")
            let chunks = try request.query.get(Int.self, at: "chunks")
            let length = request.query[Bool.self, at: "known"] == true ? chunks * ConformanceApp.chunkSize : nil
            try await app.beginExport(name)
            return Vapor.Response(
                status: .ok,
                body: .init(
                    scopedAsyncStream: { writer in
                        for _ in 0..<chunks {
                            try await writer.write(.buffer(ByteBuffer(bytes: try await app.chunk(of: name))))
                        }
                        try await writer.write(.end)
                    },
                    count: length
                )
            )
        }
        application.get("endless", ":name") { request async throws -> Vapor.Response in
            try await app.beginExport(try request.parameters.require("name"))
            return Vapor.Response(
                status: .ok,
                body: .init(scopedAsyncStream: { writer in
                    for number in 0... {
                        try await writer.write(.buffer(ByteBuffer(string: try await app.line(number))))
                    }
                })
            )
        }
    }

}

// MARK: Roots

/// Where a stack's adapter takes each request's root from.
///
/// One root, or the current root of one that reloads: each adapter has an initializer for each.
enum Roots: Sendable {
    case fixed(ScopeRoot)
    case reloading(ReloadableScopeRoot)

    func hummingbirdScopes(
        _ update: @escaping ScopedHummingbird.RequestScopeMiddleware<BasicRequestContext>.Update
    ) -> ScopedHummingbird.RequestScopeMiddleware<BasicRequestContext> {
        switch self {
        case .fixed(let root): ScopedHummingbird.RequestScopeMiddleware(root: root, update: update)
        case .reloading(let root): ScopedHummingbird.RequestScopeMiddleware(root: root, update: update)
        }
    }

    func vaporScopes(_ update: @escaping ScopedVapor.RequestScopeMiddleware.Update)
        -> ScopedVapor.RequestScopeMiddleware
    {
        switch self {
        case .fixed(let root): ScopedVapor.RequestScopeMiddleware(root: root, update: update)
        case .reloading(let root): ScopedVapor.RequestScopeMiddleware(root: root, update: update)
        }
    }

    func openAPIScopes(_ update: @escaping RequestScopeServerMiddleware.Update) -> RequestScopeServerMiddleware {
        switch self {
        case .fixed(let root): RequestScopeServerMiddleware(root: root, update: update)
        case .reloading(let root): RequestScopeServerMiddleware(root: root, update: update)
        }
    }

    func grpcScopes(_ update: @escaping RPCScopeInterceptor.Update) -> RPCScopeInterceptor {
        switch self {
        case .fixed(let root): RPCScopeInterceptor(root: root, update: update)
        case .reloading(let root): RPCScopeInterceptor(root: root, update: update)
        }
    }
}

// MARK: OpenAPI

/// The conformance app as generated handlers of `OpenAPI/openapi.yaml`.
struct ConformanceAPI: APIProtocol {
    let app: ConformanceApp

    func insert(_ input: Operations.Insert.Input) async throws -> Operations.Insert.Output {
        let mode = input.query.mode.flatMap { InsertMode(rawValue: $0.rawValue) } ?? .plain
        let answer = try await app.insert(input.path.name, mode: mode)
        return .ok(
            .init(
                body: .json(
                    .init(requestID: answer.requestID, names: answer.names, root: answer.root, audit: answer.audit)
                )
            )
        )
    }

    func export(_ input: Operations.Export.Input) async throws -> Operations.Export.Output {
        let name = input.path.name
        try await app.beginExport(name)
        let count = input.query.chunks
        let chunks = Pieces(count: count) { [app] _ in try await app.chunk(of: name) }
        let length =
            input.query.known == true ? HTTPBody.Length.known(Int64(count * ConformanceApp.chunkSize)) : .unknown
        return .ok(.init(body: .binary(HTTPBody(chunks, length: length, iterationBehavior: .single))))
    }

    func endless(_ input: Operations.Endless.Input) async throws -> Operations.Endless.Output {
        try await app.beginExport(input.path.name)
        let lines = Pieces(count: .max) { [app] number in Array(try await app.line(number).utf8) }
        return .ok(.init(body: .plainText(HTTPBody(lines, length: .unknown, iterationBehavior: .single))))
    }

    /// `count` pieces, each made as the transport reads it.
    struct Pieces: AsyncSequence, Sendable {
        let count: Int
        let make: @Sendable (Int) async throws -> [UInt8]

        func makeAsyncIterator() -> Iterator { Iterator(count: count, make: make) }

        struct Iterator: AsyncIteratorProtocol {
            let count: Int
            let make: @Sendable (Int) async throws -> [UInt8]
            var number = 0

            mutating func next() async throws -> ArraySlice<UInt8>? {
                guard number < count else { return nil }
                defer { number += 1 }
                return ArraySlice(try await make(number))
            }
        }
    }
}
