// The adapter benchmark's servers (Benchmarks/adapter-counts.sh): one small handler on each
// stack Scoped adapts, served with and without the adapter's request scope, so that the
// difference is what the scope costs on that stack.
//
// Usage: AdapterServers vapor|openapi|grpc plain|scoped PORT
//        AdapterServers grpc-load PORT SECONDS CONNECTIONS   (prints the RPCs it completed)
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
    print("usage: AdapterServers vapor|openapi|grpc plain|scoped PORT | grpc-load PORT SECONDS CONNECTIONS")
    exit(64)
}
let root = ScopeRoot { _ in }

switch (arguments[1], arguments[2]) {
case ("vapor", let mode):
    try await serveVapor(scoped: mode == "scoped", port: Int(arguments[3])!)
case ("openapi", let mode):
    try await serveOpenAPI(scoped: mode == "scoped", port: Int(arguments[3])!)
case ("grpc", let mode):
    try await serveGRPC(scoped: mode == "scoped", port: Int(arguments[3])!)
case ("grpc-load", let port):
    try await loadGRPC(port: Int(port)!, seconds: Int(arguments[3])!, connections: Int(arguments[4])!)
default:
    print("unknown stack \(arguments[1])")
    exit(64)
}

func serveVapor(scoped: Bool, port: Int) async throws {
    let app = try await Vapor.Application.make(.production)
    app.logger.logLevel = .error
    app.http.server.configuration.hostname = "127.0.0.1"
    app.http.server.configuration.port = port
    if scoped {
        app.middleware.use(RequestScopeMiddleware(root: root))
        app.get("movies", "1") { _ -> String in
            answer(catalog: ScopedValues.current.catalog, requestID: ScopedValues.current.requestID)
        }
    } else {
        let catalog = Catalog()
        app.get("movies", "1") { request -> String in answer(catalog: catalog, requestID: request.id) }
    }
    try await app.execute()
    try await app.asyncShutdown()
}

func serveOpenAPI(scoped: Bool, port: Int) async throws {
    let router = Hummingbird.Router()
    let catalog = Catalog()
    let handler: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?) =
        { request, _, _ in
            let body =
                scoped
                ? answer(catalog: ScopedValues.current.catalog, requestID: ScopedValues.current.requestID)
                : answer(catalog: catalog, requestID: request.headerFields[HTTPField.Name("X-Request-ID")!])
            return (HTTPResponse(status: .ok), HTTPBody(body))
        }
    // The glue swift-openapi-generator's `registerHandlers` generates: the handler behind the
    // middlewares.
    let middleware = RequestScopeServerMiddleware(root: root)
    let registered: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    if scoped {
        registered = { request, body, metadata in
            try await middleware.intercept(
                request,
                body: body,
                metadata: metadata,
                operationID: "getMovie",
                next: handler
            )
        }
    } else {
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

let getMovie = MethodDescriptor(fullyQualifiedService: "bench.Catalog", method: "GetMovie")

struct CatalogService: RegistrableRPCService {
    let scoped: Bool

    func registerMethods<Transport: GRPCCore.ServerTransport>(with router: inout RPCRouter<Transport>) {
        let scoped = scoped
        let catalog = Catalog()
        router.registerHandler(
            forMethod: getMovie,
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

func serveGRPC(scoped: Bool, port: Int) async throws {
    let server = GRPCServer(
        transport: .http2NIOPosix(address: .ipv4(host: "127.0.0.1", port: port), transportSecurity: .plaintext),
        services: [CatalogService(scoped: scoped)],
        interceptors: scoped ? [RPCScopeInterceptor(root: root)] : []
    )
    try await server.serve()
}

/// Calls `GetMovie` from `connections` concurrent loops for `seconds`; prints the calls made.
func loadGRPC(port: Int, seconds: Int, connections: Int) async throws {
    let completed = try await withGRPCClient(
        transport: .http2NIOPosix(target: .ipv4(address: "127.0.0.1", port: port), transportSecurity: .plaintext)
    ) { client in
        let deadline = ContinuousClock.now + .seconds(seconds)
        return try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<connections {
                group.addTask {
                    var calls = 0
                    while ContinuousClock.now < deadline {
                        _ = try await client.unary(
                            request: ClientRequest(message: MovieID(id: 1)),
                            descriptor: getMovie,
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
