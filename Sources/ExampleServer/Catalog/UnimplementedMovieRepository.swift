/// What tests read when they did not override `movieRepository`: every call throws.
struct UnimplementedMovieRepository: MovieRepository {
    struct Unimplemented: Error, CustomStringConvertible {
        var description: String { "movieRepository is not overridden in this test" }
    }

    func page(limit: Int, offset: Int) async throws -> MoviePage { throw Unimplemented() }
    func movie(id: Int) async throws -> Movie? { throw Unimplemented() }
    func create(_ input: MovieInput) async throws -> Movie { throw Unimplemented() }
    func replace(id: Int, with input: MovieInput) async throws -> Movie? { throw Unimplemented() }
    func delete(id: Int) async throws -> Bool { throw Unimplemented() }
    func addRating(movieID: Int, stars: Int) async throws -> Bool { throw Unimplemented() }
    func ratingTotals(movieID: Int) async throws -> (count: Int, sum: Int)? { throw Unimplemented() }
}
