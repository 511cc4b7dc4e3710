import MovieCatalog

/// A repository that does what `base` does, except where a test changes it: every method it
/// does not implement forwards to `base`.
protocol ForwardingRepository: MovieRepository {
    var base: any MovieRepository { get }
}

extension ForwardingRepository {
    func page(limit: Int, offset: Int) async throws -> MoviePage { try await base.page(limit: limit, offset: offset) }
    func movies(after id: Int, limit: Int) async throws -> [Movie] { try await base.movies(after: id, limit: limit) }
    func movie(id: Int) async throws -> Movie? { try await base.movie(id: id) }
    func create(_ input: MovieInput) async throws -> Movie { try await base.create(input) }
    func replace(id: Int, with input: MovieInput) async throws -> Movie? { try await base.replace(id: id, with: input) }
    func delete(id: Int) async throws -> Bool { try await base.delete(id: id) }
    func addRating(movieID: Int, stars: Int) async throws -> Bool {
        try await base.addRating(movieID: movieID, stars: stars)
    }
    func ratingTotals(movieID: Int) async throws -> (count: Int, sum: Int)? {
        try await base.ratingTotals(movieID: movieID)
    }
}
