package import Hummingbird
import Logging
import Scoped

/// The catalog's routes.
///
/// Built once at start-up; every dependency is read from the request's scope when a handler runs.
package struct MovieController<Context: RequestContext>: Sendable {
    @Scoped(\.movieRepository) private var movies
    @Scoped(\.ratingService) private var ratings
    @Scoped(\.movieHistory) private var history

    /// How long recording a change may take after its response before it is cancelled.
    static var historyTimeout: Duration { .seconds(10) }

    /// Creates the controller; it reads its dependencies from each request's scope.
    package init() {}

    package func addRoutes(to routes: RouteRecorder<Context>) {
        routes.on(.get, "/movies") { request, _ in try await list(request) }
        routes.on(.post, "/movies") { request, context in try await create(request, context: context) }
        routes.on(.get, "/movies/export") { _, _ in export() }
        routes.on(.get, "/movies/:id") { _, context in try await show(context) }
        routes.on(.put, "/movies/:id") { request, context in try await replace(request, context: context) }
        routes.on(.delete, "/movies/:id") { _, context in try await delete(context) }
        routes.on(.post, "/movies/:id/ratings") { request, context in try await rate(request, context: context) }
        routes.on(.get, "/movies/:id/rating") { _, context in try await rating(context) }
        routes.on(.get, "/changes") { request, _ in try await changes(request) }
    }

    package func list(_ request: Request) async throws -> Response {
        let limit = try RequestInput.query(request, "limit", default: 50, in: 1...500)
        let offset = try RequestInput.query(request, "offset", default: 0, in: 0...Int.max)
        return try JSONResponse.make(try await movies.page(limit: limit, offset: offset))
    }

    /// How many movies the export reads per statement, and writes per chunk.
    static var exportBatchSize: Int { 500 }

    /// The whole catalog as NDJSON, one movie per line, ordered by ID.
    ///
    /// The body is streamed in batches after the handler returned; its reads resolve to the
    /// request's scope, which stays open until the body is written, so every batch comes from
    /// the one read transaction of the request's session: the export is one snapshot even while
    /// other requests write.
    package func export() -> Response {
        let body = ResponseBody { writer in
            var after = 0
            while true {
                let batch = try await movies.movies(after: after, limit: Self.exportBatchSize)
                guard let last = batch.last else { break }
                var buffer = ByteBuffer()
                for movie in batch { try JSONResponse.appendLine(movie, to: &buffer) }
                try await writer.write(buffer)
                after = last.id
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: [.contentType: JSONResponse.ndjsonContentType], body: body)
    }

    package func show(_ context: Context) async throws -> Response {
        let id = try RequestInput.id(context)
        guard let movie = try await movies.movie(id: id) else { throw APIError.notFound("No movie with id \(id).") }
        return try JSONResponse.make(movie)
    }

    package func create(_ request: Request, context: Context) async throws -> Response {
        let input = try RequestInput.validate(try await RequestInput.decode(RequestInput.MovieBody.self, from: request))
        let movie = try await movies.create(input)
        recordAfterResponse(.created, movieID: movie.id)
        return try JSONResponse.make(movie, status: .created, headers: [.location: "/movies/\(movie.id)"])
    }

    package func replace(_ request: Request, context: Context) async throws -> Response {
        let id = try RequestInput.id(context)
        let input = try RequestInput.validate(try await RequestInput.decode(RequestInput.MovieBody.self, from: request))
        guard let movie = try await movies.replace(id: id, with: input) else {
            throw APIError.notFound("No movie with id \(id).")
        }
        recordAfterResponse(.replaced, movieID: id)
        return try JSONResponse.make(movie)
    }

    package func delete(_ context: Context) async throws -> Response {
        let id = try RequestInput.id(context)
        guard try await movies.delete(id: id) else { throw APIError.notFound("No movie with id \(id).") }
        recordAfterResponse(.deleted, movieID: id)
        return Response(status: .noContent)
    }

    package func rate(_ request: Request, context: Context) async throws -> Response {
        let id = try RequestInput.id(context)
        let stars = try RequestInput.validate(
            try await RequestInput.decode(RequestInput.RatingBody.self, from: request)
        )
        guard let rating = try await ratings.rate(movieID: id, stars: stars) else {
            throw APIError.notFound("No movie with id \(id).")
        }
        return try JSONResponse.make(rating, status: .created)
    }

    package func rating(_ context: Context) async throws -> Response {
        let id = try RequestInput.id(context)
        guard let rating = try await ratings.rating(movieID: id) else {
            throw APIError.notFound("No movie with id \(id).")
        }
        return try JSONResponse.make(rating)
    }

    /// The recorded changes of the movie `?movieID=` names, oldest first.
    ///
    /// A collection of its own rather than a part of the movie, because it outlives the movie:
    /// a deleted movie's changes end with its deletion.
    package func changes(_ request: Request) async throws -> Response {
        guard request.uri.queryParameters.get("movieID") != nil else {
            throw APIError.badRequest("movieID is required.", field: "movieID", code: "invalid_query")
        }
        let id = try RequestInput.query(request, "movieID", default: 0, in: 1...Int.max)
        return try JSONResponse.make(MovieChanges(items: try await history.changes(movieID: id)))
    }

    /// Records a change once the request's own work is done.
    ///
    /// The record is handed off, in a scope and a transaction of its own that see this
    /// request's ID. A failure is logged; the change itself has committed.
    private func recordAfterResponse(_ action: MovieChange.Action, movieID: Int) {
        let history = history
        handOff(timeout: Self.historyTimeout) {
            do {
                try await history.record(action, movieID: movieID)
            } catch {
                Logger.current.warning("Could not record that movie \(movieID) was \(action.rawValue): \(error)")
                throw error
            }
        }
    }
}
