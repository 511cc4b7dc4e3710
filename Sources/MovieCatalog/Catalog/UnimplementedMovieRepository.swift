/// What tests read when they did not override `movieRepository`: every call throws.
package struct UnimplementedMovieRepository: MovieRepository {
    package struct Unimplemented: Error, CustomStringConvertible {
        package var description: String { "movieRepository is not overridden in this test" }
    }

    package func page(limit: Int, offset: Int) async throws -> MoviePage { throw Unimplemented() }
    package func movies(after id: Int, limit: Int) async throws -> [Movie] { throw Unimplemented() }
    package func movie(id: Int) async throws -> Movie? { throw Unimplemented() }
    package func create(_ input: MovieInput) async throws -> Movie { throw Unimplemented() }
    package func replace(id: Int, with input: MovieInput) async throws -> Movie? { throw Unimplemented() }
    package func delete(id: Int) async throws -> Bool { throw Unimplemented() }
    package func addRating(movieID: Int, stars: Int) async throws -> Bool { throw Unimplemented() }
    package func ratingTotals(movieID: Int) async throws -> (count: Int, sum: Int)? { throw Unimplemented() }
}
