import Foundation
import CatalogApp
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import MovieCatalog
import OpenAPIRuntime
import Scoped
import ScopedDatabase
import ScopedHummingbird
import PostgresNIO
import ScopedPostgres
import ScopedSQLite
import ServiceLifecycle

/// The example server's `GET /movies/{id}` and `POST /movies`, with their sessions and
/// repository passed by hand.
///
/// The stack is ExampleServer's (its HTTP channel, request IDs, the request log, API errors,
/// its routes (`APP_ENV=production` leaves out the debug routes, as ExampleServer's production
/// profile does), the handlers generated from `openapi.yaml`, JSON encoding, one SQLite or PostgreSQL
/// transaction per request) with one difference: the handler is handed its session and
/// repository instead of reading them from a request scope.
/// `Benchmarks/load.sh` runs it against ExampleServer to isolate what Scoped costs.
@main
enum HandWiredCatalog {
    static func main() async throws {
        let environment = ProcessInfo.processInfo.environment
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .info
            return handler
        }
        let store = try await Store(environment)
        let router = Router()
        let table = RouteTable()
        router.add(middleware: RequestIDMiddleware())
        // As ExampleServer with `METRICS_ENABLED=false`: a trace span per request, no backend.
        router.add(middleware: TracingMiddleware())
        router.add(middleware: RequestLogMiddleware(level: .debug))
        router.add(middleware: APIErrorMiddleware(routes: table))
        let layer = try ScopeLayer(environment)
        if let root = layer.root(environment) {
            // ExampleServer's transaction modes: a request that only reads runs in a read-only
            // transaction, as the by-hand session does (`writing: false`); the default would
            // take the writer.
            router.add(
                middleware: RequestScopeMiddleware(root: root) { values, request, _ in
                    values.transactionMode = CatalogServer.transactionMode(for: request.method, path: request.uri.path)
                }
            )
        }
        // ExampleServer's other routes, registered where it registers them, so that the router
        // matches `/movies/{id}` and `/movies` past the same routes; answered 501 here, but for
        // `/health`.
        let routes = RouteRecorder(router: router, table: table)
        routes.on(.get, "/health") { _, _ in try JSONResponse.make(["status": "ok"]) }
        for path in ["/metrics", "/openapi.json"] {
            routes.on(.get, path) { _, _ in throw HandWiredAPI.notServed }
        }
        HandWiredAPI(store: store, layer: layer).addRoutes(to: router, table: table)
        routes.on(.get, "/movies/live") { _, _ in throw HandWiredAPI.notServed }
        // The debug routes of every profile but production (`debug.routes` in `Config/`).
        if environment["APP_ENV"] != "production" {
            for path in ["/debug/scope", "/debug/echo", "/debug/stats", "/debug/hanging-close", "/debug/graph"] {
                routes.on(.get, path) { _, _ in throw HandWiredAPI.notServed }
            }
        }
        // ExampleServer's channel: hummingbird-websocket's upgrade channel, guarded until the
        // first request head; no WebSocket route here.
        let webSocketResponder = Router(context: BasicWebSocketRequestContext.self).buildResponder()
        let app = Application(
            router: router,
            server: HTTPServerBuilder { responder in
                GuardedChildChannel(
                    base: HTTP1WebSocketUpgradeChannel(
                        responder: responder,
                        webSocketResponder: webSocketResponder,
                        // ExampleServer's profiles set `http.idleTimeout` (60 s in development,
                        // 30 s in production), so that a client that goes quiet cannot hold a
                        // connection; a careful hand-written server would too. Hummingbird
                        // schedules that timeout on the event loop for every request.
                        configuration: .init(http1: .init(idleTimeout: .seconds(60)))
                    ),
                    timeout: .seconds(60)
                )
            },
            configuration: .init(
                address: .hostname("127.0.0.1", port: Int(environment["HTTP_PORT"] ?? "8090") ?? 8090),
                serverName: "HandWiredCatalog"
            ),
            logger: Logger(label: "HandWiredCatalog")
        )
        try await app.runService()
    }
}

/// The database, chosen as ExampleServer chooses it: SQLite at `DATABASE_PATH`, or PostgreSQL
/// at `DATABASE_URL` when `DATABASE_KIND` is `postgres` (migrated by ExampleServer first).
struct Store {
    let sqlite: SQLiteDatabase?
    /// The database with its two clients, as ExampleServer's root builds it: read-only sessions
    /// lease from its read client.
    let postgres: ScopedPostgres.PostgresDatabase?

    init(_ environment: [String: String]) async throws {
        if environment["DATABASE_KIND"] == "postgres" {
            let configuration = try PostgresConfiguration(url: environment["DATABASE_URL"] ?? "")
            let logger = Logger(label: "HandWiredCatalog.postgres", factory: { _ in SwiftLogNoOpLogHandler() })
            let client = PostgresClient(configuration: configuration.clientConfiguration)
            let readClient = PostgresReadClient(configuration: configuration, backgroundLogger: logger)
            // The clients run for as long as the process does.
            Task { await client.run() }
            Task { await readClient.run() }
            postgres = try await ScopedPostgres.PostgresDatabase(
                client: client,
                readClient: readClient,
                configuration: configuration,
                logger: logger
            )
            sqlite = nil
        } else {
            sqlite = try SQLiteDatabase(
                SQLiteConfiguration(
                    path: environment["DATABASE_PATH"] ?? "handwired.sqlite",
                    migrations: SQLiteMovieRepository.migrations
                )
            )
            postgres = nil
        }
    }

    /// A session made by hand, as ExampleServer makes one for a GET (`writing: false`) or a
    /// POST; the repository on it, and how to end it.
    func session(writing: Bool) -> (any MovieRepository, @Sendable (ScopeOutcome) async throws -> Void) {
        if let postgres {
            let session = PostgresSession(database: postgres, mode: writing ? .readWrite : .readOnly)
            return (PostgresMovieRepository(session: session), { try await session.finish($0) })
        }
        let session = SQLiteSession(database: sqlite!, mode: writing ? .readWrite : .readOnly)
        return (SQLiteMovieRepository(session: session), { try await session.finish($0) })
    }

    /// Records a change in the movie history, in a transaction of its own.
    func record(_ action: MovieChange.Action, movieID: Int, requestID: String) async throws {
        if let postgres {
            let session = PostgresSession(database: postgres, mode: .readWrite)
            _ = try await finishing(session.finish) {
                try await session.execute(
                    """
                    INSERT INTO movie_changes (movie_id, action, request_id)
                    VALUES (\(movieID), \(action.rawValue), \(requestID))
                    """
                )
            }
        } else {
            let session = SQLiteSession(database: sqlite!, mode: .readWrite)
            _ = try await finishing(session.finish) {
                try await session.insert(
                    """
                    INSERT INTO movie_changes (movie_id, action, request_id)
                    VALUES (\(movieID), \(action.rawValue), \(requestID))
                    """
                )
            }
        }
    }
}

/// Runs `body`, then ends its session by hand with `finish`: a commit after success, a
/// rollback after a failure, whose own error gives way to the body's.
func finishing<R>(
    _ finish: (ScopeOutcome) async throws -> Void,
    _ body: () async throws -> R
) async throws -> R {
    let result: R
    do {
        result = try await body()
    } catch {
        try? await finish(.failure(error))
        throw error
    }
    try await finish(.success)
    return result
}

/// The two benchmarked operations, on the server generated from the example's `openapi.yaml`;
/// the others answer 501.
struct HandWiredAPI: APIProtocol {
    let store: Store
    let layer: ScopeLayer

    func showMovie(_ input: Operations.ShowMovie.Input) async throws -> Operations.ShowMovie.Output {
        let id = try RequestInput.id(input.path.id)
        if layer == .session {
            guard let movie = try await ScopedValues.current.movieRepository.movie(id: id) else {
                throw APIError.notFound("No movie with id \(id).")
            }
            return .ok(.init(body: .json(movie)))
        }
        // By hand: one session per request, its repository, and the commit or rollback.
        let (repository, finish) = store.session(writing: false)
        return try await finishing(finish) {
            guard let movie = try await repository.movie(id: id) else {
                throw APIError.notFound("No movie with id \(id).")
            }
            return .ok(.init(body: .json(movie)))
        }
    }

    func createMovie(_ input: Operations.CreateMovie.Input) async throws -> Operations.CreateMovie.Output {
        guard case .json(let body) = input.body else { preconditionFailure("one content type") }
        let movieInput = try RequestInput.validate(body)
        let (repository, finish) = store.session(writing: true)
        let movie = try await finishing(finish) { try await repository.create(movieInput) }
        // As ExampleServer's history: recorded after the response, in a transaction of its
        // own; here by an unstructured task that nothing waits for at shutdown.
        // Generated handlers see no framework request: the ID is the one the request's logger carries.
        let requestID = Logger.current[metadataKey: "hb.request.id"]?.description ?? ""
        Task { try? await store.record(.created, movieID: movie.id, requestID: requestID) }
        return .created(.init(headers: .init(location: "/movies/\(movie.id)"), body: .json(movie)))
    }

    static var notServed: APIError {
        APIError(status: .notImplemented, code: "not_implemented", message: "Not served by the hand-wired catalog.")
    }

    func listMovies(_ input: Operations.ListMovies.Input) async throws -> Operations.ListMovies.Output {
        throw Self.notServed
    }

    func exportMovies(_ input: Operations.ExportMovies.Input) async throws -> Operations.ExportMovies.Output {
        throw Self.notServed
    }

    func replaceMovie(_ input: Operations.ReplaceMovie.Input) async throws -> Operations.ReplaceMovie.Output {
        throw Self.notServed
    }

    func deleteMovie(_ input: Operations.DeleteMovie.Input) async throws -> Operations.DeleteMovie.Output {
        throw Self.notServed
    }

    func rateMovie(_ input: Operations.RateMovie.Input) async throws -> Operations.RateMovie.Output {
        throw Self.notServed
    }

    func showRating(_ input: Operations.ShowRating.Input) async throws -> Operations.ShowRating.Output {
        throw Self.notServed
    }

    func listMovieChanges(
        _ input: Operations.ListMovieChanges.Input
    ) async throws -> Operations.ListMovieChanges.Output {
        throw Self.notServed
    }
}
