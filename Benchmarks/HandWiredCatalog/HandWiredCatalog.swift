import Foundation
import Hummingbird
import Logging
import MovieCatalog
import Scoped
import ScopedHummingbird
import ScopedSQLite

/// The example server's `GET /movies/{id}`, with its session and repository passed by hand.
///
/// The stack is ExampleServer's (request IDs, the request log, API errors, routing, JSON
/// encoding, one SQLite transaction per request) with one difference: the handler is handed
/// its session and repository instead of reading them from a request scope.
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
        let database = try SQLiteDatabase(
            SQLiteConfiguration(
                path: environment["DATABASE_PATH"] ?? "handwired.sqlite",
                migrations: SQLiteMovieRepository.migrations
            )
        )
        let router = Router()
        let table = RouteTable()
        router.add(middleware: RequestIDMiddleware())
        // As ExampleServer with `METRICS_ENABLED=false`: a trace span per request, no backend.
        router.add(middleware: TracingMiddleware())
        router.add(middleware: RequestLogMiddleware(level: .debug))
        router.add(middleware: APIErrorMiddleware(routes: table))
        RouteRecorder(router: router, table: table)
            .on(.get, "/movies/:id") { _, context in
                let id = try RequestInput.id(context)
                // By hand: one session per request, its repository, and the commit or rollback.
                let session = SQLiteSession(database: database)
                do {
                    guard let movie = try await SQLiteMovieRepository(session: session).movie(id: id) else {
                        throw APIError.notFound("No movie with id \(id).")
                    }
                    let response = try JSONResponse.make(movie)
                    try await session.finish(.success)
                    return response
                } catch {
                    try? await session.finish(.failure(error))
                    throw error
                }
            }
        let app = Application(
            router: router,
            configuration: .init(
                address: .hostname("127.0.0.1", port: Int(environment["HTTP_PORT"] ?? "8090") ?? 8090),
                serverName: "HandWiredCatalog"
            ),
            logger: Logger(label: "HandWiredCatalog")
        )
        try await app.runService()
    }
}
