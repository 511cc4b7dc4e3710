// The adapter benchmark's servers (Benchmarks/adapter-counts.sh): one small handler on each
// stack Scoped adapts, served without the adapter (`plain`), behind a middleware or interceptor
// of the stack's own kind that does nothing (`empty`), and with the adapter's request scope
// (`scoped`): `empty` against `plain` is what the stack charges for any middleware; `scoped`
// against `empty` is what the scope costs.
//
// Usage: AdapterServers vapor|openapi|grpc plain|empty|scoped PORT
//        AdapterServers grpc-load PORT SECONDS CALLS
//        (CALLS concurrent calls on one HTTP/2 connection; prints how many completed)
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2
import HTTPTypes
import Hummingbird
import Logging
import OpenAPIHummingbird
import OpenAPIRuntime
import Scoped
import ScopedGRPC
import ScopedOpenAPI
import ScopedVapor
import Vapor

/// The handler's one dependency: what a catalog's repository answers for one movie.
struct Catalog: Sendable {
    func title(of id: Int) -> String { "Movie \(id)" }
}

extension ScopedValues {
    @Entry var catalog: Catalog = Catalog()
}

/// The answer, the same bytes on every stack.
func answer(catalog: Catalog, requestID: String?) -> String {
    #"{"id":1,"title":"\#(catalog.title(of: 1))","requestID":"\#(requestID ?? "-")"}"#
}

let arguments = CommandLine.arguments
guard arguments.count >= 4 else {
    print("usage: AdapterServers vapor|openapi|grpc plain|empty|scoped PORT | grpc-load PORT SECONDS CALLS")
    exit(64)
}
let root = ScopeRoot { _ in }

/// How a server runs its handler.
enum Mode: String {
    /// The handler alone, reading what it needs from the request and a captured value.
    case plain
    /// Behind a middleware (an interceptor for gRPC) that only calls the next one.
    case empty
    /// Behind the adapter: the handler reads the request's scope.
    case scoped
}

switch (arguments[1], arguments[2]) {
case ("vapor", let mode):
    try await serveVapor(Mode(rawValue: mode)!, port: Int(arguments[3])!)
case ("openapi", let mode):
    try await serveOpenAPI(Mode(rawValue: mode)!, port: Int(arguments[3])!)
case ("grpc", let mode):
    try await serveGRPC(Mode(rawValue: mode)!, port: Int(arguments[3])!)
case ("grpc-load", let port):
    try await loadGRPC(port: Int(port)!, seconds: Int(arguments[3])!, calls: Int(arguments[4])!)
default:
    print("unknown stack \(arguments[1])")
    exit(64)
}

/// A Vapor middleware that only calls the next responder.
struct EmptyVaporMiddleware: AsyncMiddleware {
    func respond(to request: Vapor.Request, chainingTo next: any AsyncResponder) async throws -> Vapor.Response {
        try await next.respond(to: request)
    }
}

func serveVapor(_ mode: Mode, port: Int) async throws {
    // Vapor reads its command from the arguments: this process's own are the benchmark's.
    let app = try await Vapor.Application.make(Environment(name: "production", arguments: ["AdapterServers", "serve"]))
    app.logger.logLevel = .error
    app.http.server.configuration.hostname = "127.0.0.1"
    app.http.server.configuration.port = port
    if mode == .scoped {
        app.middleware.use(RequestScopeMiddleware(root: root))
        // Async handlers, both: a synchronous Vapor handler runs on the event loop, outside the
        // request's task, and so outside its scope.
        app.get("movies", "1") { _ async -> String in
            answer(catalog: ScopedValues.current.catalog, requestID: ScopedValues.current.requestID)
        }
    } else {
        if mode == .empty { app.middleware.use(EmptyVaporMiddleware()) }
        let catalog = Catalog()
        app.get("movies", "1") { request async -> String in answer(catalog: catalog, requestID: request.id) }
    }
    try await app.execute()
    try await app.asyncShutdown()
}

func serveOpenAPI(_ mode: Mode, port: Int) async throws {
    let router = Hummingbird.Router()
    let catalog = Catalog()
    let handler: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?) =
        { request, _, _ in
            let body =
                mode == .scoped
                ? answer(catalog: ScopedValues.current.catalog, requestID: ScopedValues.current.requestID)
                : answer(catalog: catalog, requestID: request.headerFields[HTTPField.Name("X-Request-ID")!])
            return (HTTPResponse(status: .ok), HTTPBody(body))
        }
    // The glue swift-openapi-generator's `registerHandlers` generates: the handler behind the
    // middlewares.
    let middleware = RequestScopeServerMiddleware(root: root)
    let registered: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    switch mode {
    case .scoped:
        registered = { request, body, metadata in
            try await middleware.intercept(
                request,
                body: body,
                metadata: metadata,
                operationID: "getMovie",
                next: handler
            )
        }
    case .empty:
        registered = { request, body, metadata in
            try await EmptyServerMiddleware()
                .intercept(
                    request,
                    body: body,
                    metadata: metadata,
                    operationID: "getMovie",
                    next: handler
                )
        }
    case .plain:
        registered = handler
    }
    router.register(registered, method: .get, path: "/movies/1")
    let app = Hummingbird.Application(
        router: router,
        configuration: .init(address: .hostname("127.0.0.1", port: port)),
        logger: Logger(label: "openapi")
    )
    try await app.runService()
}

struct MovieID: Codable, Sendable { var id: Int }
struct Movie: Codable, Sendable {
    var id: Int
    var title: String
    var requestID: String?
}

struct JSONCodec<Message: Codable & Sendable>: MessageSerializer, MessageDeserializer {
    func serialize<Bytes: GRPCContiguousBytes>(_ message: Message) throws -> Bytes {
        Bytes(try JSONEncoder().encode(message))
    }
    func deserialize<Bytes: GRPCContiguousBytes>(_ serializedMessageBytes: Bytes) throws -> Message {
        try JSONDecoder().decode(Message.self, from: serializedMessageBytes.withUnsafeBytes { Data($0) })
    }
}

/// The one RPC. A static, not a top-level constant: main.swift's top-level code initializes
/// its constants in order, after the `switch` above has started a server.
extension MethodDescriptor {
    static let getMovie = MethodDescriptor(fullyQualifiedService: "bench.Catalog", method: "GetMovie")
}

struct CatalogService: RegistrableRPCService {
    let scoped: Bool

    func registerMethods<Transport: GRPCCore.ServerTransport>(with router: inout RPCRouter<Transport>) {
        let scoped = scoped
        let catalog = Catalog()
        router.registerHandler(
            forMethod: .getMovie,
            deserializer: JSONCodec<MovieID>(),
            serializer: JSONCodec<Movie>()
        ) { request, _ in
            let id = try await ServerRequest(stream: request).message.id
            let movie =
                scoped
                ? Movie(
                    id: id,
                    title: ScopedValues.current.catalog.title(of: id),
                    requestID: ScopedValues.current.requestID
                )
                : Movie(id: id, title: catalog.title(of: id), requestID: nil)
            return StreamingServerResponse(single: ServerResponse(message: movie))
        }
    }
}

/// A swift-openapi-runtime middleware that only calls the next one.
struct EmptyServerMiddleware: ServerMiddleware {
    @concurrent
    func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        metadata: ServerRequestMetadata,
        operationID: String,
        next:
            @concurrent @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (
                HTTPResponse, HTTPBody?
            )
    ) async throws -> (HTTPResponse, HTTPBody?) {
        try await next(request, body, metadata)
    }
}

/// A grpc-swift server interceptor that only calls the next one.
struct EmptyInterceptor: ServerInterceptor {
    @concurrent
    func intercept<Input: Sendable, Output: Sendable>(
        request: StreamingServerRequest<Input>,
        context: ServerContext,
        next:
            @concurrent @Sendable (StreamingServerRequest<Input>, ServerContext) async throws ->
            StreamingServerResponse<Output>
    ) async throws -> StreamingServerResponse<Output> {
        try await next(request, context)
    }
}

func serveGRPC(_ mode: Mode, port: Int) async throws {
    let interceptors: [any ServerInterceptor] =
        switch mode {
        case .plain: []
        case .empty: [EmptyInterceptor()]
        case .scoped: [RPCScopeInterceptor(root: root)]
        }
    let server = GRPCServer(
        transport: .http2NIOPosix(address: .ipv4(host: "127.0.0.1", port: port), transportSecurity: .plaintext),
        services: [CatalogService(scoped: mode == .scoped)],
        interceptors: interceptors
    )
    try await server.serve()
}

/// Calls `GetMovie` from `calls` concurrent loops on one connection for `seconds`; prints the calls made.
func loadGRPC(port: Int, seconds: Int, calls concurrency: Int) async throws {
    let completed = try await withGRPCClient(
        transport: .http2NIOPosix(target: .ipv4(address: "127.0.0.1", port: port), transportSecurity: .plaintext)
    ) { client in
        let deadline = ContinuousClock.now + .seconds(seconds)
        return try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<concurrency {
                group.addTask {
                    var calls = 0
                    while ContinuousClock.now < deadline {
                        _ = try await client.unary(
                            request: ClientRequest(message: MovieID(id: 1)),
                            descriptor: .getMovie,
                            serializer: JSONCodec<MovieID>(),
                            deserializer: JSONCodec<Movie>(),
                            options: .defaults
                        ) { try $0.message }
                        calls += 1
                    }
                    return calls
                }
            }
            return try await group.reduce(0, +)
        }
    }
    print(completed)
}
