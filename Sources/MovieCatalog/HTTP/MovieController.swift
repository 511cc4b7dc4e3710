package import Hummingbird
import OpenAPIHummingbird
package import OpenAPIRuntime
import Scoped

/// The catalog's operations, as `openapi.yaml` declares them.
///
/// The generated server decodes each request into its operation's `Input` before a handler
/// runs; what the generator does not check (ranges, lengths, a positive id) is checked here,
/// with the same field names. Every dependency is read from the request's scope when a handler
/// runs; errors are thrown as ``APIError``s, which ``APIErrorMiddleware`` turns into the
/// contract's error body.
package struct MovieController: APIProtocol {
    @Scoped(\.movieRepository) private var movies
    @Scoped(\.ratingService) private var ratings
    @Scoped(\.movieHistory) private var history

    /// How long recording a change may take after its response before it is cancelled.
    static var historyTimeout: Duration { .seconds(10) }

    /// How many movies the export reads per statement, and writes per chunk.
    static var exportBatchSize: Int { 500 }

    /// Creates the controller; it reads its dependencies from each request's scope.
    package init() {}

    package func listMovies(_ input: Operations.ListMovies.Input) async throws -> Operations.ListMovies.Output {
        let limit = try RequestInput.query(input.query.limit, "limit", of: Operations.ListMovies.id, default: 50)
        let offset = try RequestInput.query(input.query.offset, "offset", of: Operations.ListMovies.id, default: 0)
        return .ok(.init(body: .json(try await movies.page(limit: limit, offset: offset))))
    }

    /// The whole catalog as NDJSON, one movie per line, ordered by ID.
    ///
    /// The body is streamed in batches after the handler returned; its reads resolve to the
    /// request's scope, which stays open until the body is written, so every batch comes from
    /// the one read transaction of the request's session (`.readOnlySnapshot`, which the
    /// example's scope sets for this route): the export is one snapshot even while other
    /// requests write.
    package func exportMovies(_ input: Operations.ExportMovies.Input) async throws -> Operations.ExportMovies.Output {
        let body = HTTPBody(ExportLines(movies: movies), length: .unknown, iterationBehavior: .single)
        return .ok(.init(body: .applicationXNdjson(body)))
    }

    package func showMovie(_ input: Operations.ShowMovie.Input) async throws -> Operations.ShowMovie.Output {
        let id = try RequestInput.id(input.path.id)
        guard let movie = try await movies.movie(id: id) else { throw APIError.notFound("No movie with id \(id).") }
        return .ok(.init(body: .json(movie)))
    }

    package func createMovie(_ input: Operations.CreateMovie.Input) async throws -> Operations.CreateMovie.Output {
        guard case .json(let body) = input.body else { preconditionFailure("one content type") }
        let movie = try await movies.create(try RequestInput.validate(body))
        recordAfterResponse(.created, movieID: movie.id)
        return .created(.init(headers: .init(location: "/movies/\(movie.id)"), body: .json(movie)))
    }

    package func replaceMovie(_ input: Operations.ReplaceMovie.Input) async throws -> Operations.ReplaceMovie.Output {
        let id = try RequestInput.id(input.path.id)
        guard case .json(let body) = input.body else { preconditionFailure("one content type") }
        guard let movie = try await movies.replace(id: id, with: try RequestInput.validate(body)) else {
            throw APIError.notFound("No movie with id \(id).")
        }
        recordAfterResponse(.replaced, movieID: id)
        return .ok(.init(body: .json(movie)))
    }

    package func deleteMovie(_ input: Operations.DeleteMovie.Input) async throws -> Operations.DeleteMovie.Output {
        let id = try RequestInput.id(input.path.id)
        guard try await movies.delete(id: id) else { throw APIError.notFound("No movie with id \(id).") }
        recordAfterResponse(.deleted, movieID: id)
        return .noContent(.init())
    }

    package func rateMovie(_ input: Operations.RateMovie.Input) async throws -> Operations.RateMovie.Output {
        let id = try RequestInput.id(input.path.id)
        guard case .json(let body) = input.body else { preconditionFailure("one content type") }
        guard let rating = try await ratings.rate(movieID: id, stars: try RequestInput.stars(body.stars)) else {
            throw APIError.notFound("No movie with id \(id).")
        }
        return .created(.init(body: .json(rating)))
    }

    package func showRating(_ input: Operations.ShowRating.Input) async throws -> Operations.ShowRating.Output {
        let id = try RequestInput.id(input.path.id)
        guard let rating = try await ratings.rating(movieID: id) else {
            throw APIError.notFound("No movie with id \(id).")
        }
        return .ok(.init(body: .json(rating)))
    }

    /// The recorded changes of the movie `?movieID=` names, oldest first.
    ///
    /// A collection of its own rather than a part of the movie, because it outlives the movie:
    /// a deleted movie's changes end with its deletion.
    package func listMovieChanges(
        _ input: Operations.ListMovieChanges.Input
    ) async throws -> Operations.ListMovieChanges.Output {
        let id = try RequestInput.query(input.query.movieID, "movieID", of: Operations.ListMovieChanges.id, default: 0)
        return .ok(.init(body: .json(MovieChanges(items: try await history.changes(movieID: id)))))
    }

    /// Records a change once the request's own work is done.
    ///
    /// The record is handed off to start once the request's transaction has committed, in a
    /// scope and a transaction of its own that see this request's ID: it never records a change
    /// that rolled back, and its transaction sees the change. A failure is logged and counted
    /// (`ScopeRoot.handOffsFailed`); the change itself has committed.
    private func recordAfterResponse(_ action: MovieChange.Action, movieID: Int) {
        let history = history
        // A record that fails is logged by Scoped, with this line and the request's ID.
        handOff(.afterCommit, timeout: Self.historyTimeout) {
            try await history.record(action, movieID: movieID)
        }
    }
}

extension APIProtocol {
    /// Serves these implementations of the catalog's operations on `router`, as the example
    /// serves them: bodies of at most ``RequestInput/maximumBodySize`` (413 beyond), read as
    /// JSON whatever their headers say, answered with compact JSON of sorted keys, and each
    /// route recorded in `table`, for 405 answers.
    package func addRoutes<Context: RequestContext>(to router: Router<Context>, table: RouteTable) {
        let group = router.group().add(middleware: CatalogInputMiddleware(limit: RequestInput.maximumBodySize))
        do {
            try registerHandlers(
                on: RecordingTransport(transport: group, table: table),
                configuration: Configuration(jsonEncodingOptions: [.sortedKeys]),
                middlewares: [CatalogHeadersMiddleware()]
            )
        } catch {
            // Registering throws only for a server URL that is not one; the default is "/".
            preconditionFailure("The catalog's routes could not be registered: \(error)")
        }
    }
}

/// The catalog as NDJSON lines, read in batches of ``MovieController/exportBatchSize`` as the
/// body is written: each batch after the last ID of the one before.
private struct ExportLines: AsyncSequence, Sendable {
    typealias Element = ArraySlice<UInt8>
    var movies: any MovieRepository

    func makeAsyncIterator() -> Iterator { Iterator(movies: movies) }

    struct Iterator: AsyncIteratorProtocol {
        let movies: any MovieRepository
        var after = 0
        var finished = false

        mutating func next() async throws -> ArraySlice<UInt8>? {
            guard !finished else { return nil }
            let batch = try await movies.movies(after: after, limit: MovieController.exportBatchSize)
            guard let last = batch.last else {
                finished = true
                return nil
            }
            var buffer = ByteBuffer()
            for movie in batch { try JSONResponse.appendLine(movie, to: &buffer) }
            after = last.id
            return ArraySlice(buffer.readableBytesView)
        }
    }
}
