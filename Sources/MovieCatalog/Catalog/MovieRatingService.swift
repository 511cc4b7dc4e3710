import Scoped

/// Computes movies' ratings from the repository of the current scope.
package struct MovieRatingService: Sendable {
    @Scoped(\.movieRepository) private var movies

    /// Records `stars` for a movie and returns its new rating; `nil` when the movie does not exist.
    package func rate(movieID: Int, stars: Int) async throws -> Rating? {
        guard try await movies.addRating(movieID: movieID, stars: stars) else { return nil }
        return try await rating(movieID: movieID)
    }

    /// A movie's rating; `nil` when the movie does not exist.
    package func rating(movieID: Int) async throws -> Rating? {
        guard let totals = try await movies.ratingTotals(movieID: movieID) else { return nil }
        let average = totals.count == 0 ? nil : Double(totals.sum) / Double(totals.count)
        return Rating(movieID: movieID, average: average, count: totals.count)
    }
}
