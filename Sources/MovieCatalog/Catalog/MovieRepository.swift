/// Where movies and their ratings are kept.
///
/// The production default is SQLite; tests and the `fixture` variant use memory.
package protocol MovieRepository: Sendable {
    /// The movies ordered by ID, `limit` of them from `offset`, and how many there are in all.
    func page(limit: Int, offset: Int) async throws -> MoviePage
    /// Up to `limit` movies with IDs above `id`, ordered by ID: one batch of a walk through the
    /// whole catalog that stays correct while movies are added and deleted.
    func movies(after id: Int, limit: Int) async throws -> [Movie]
    func movie(id: Int) async throws -> Movie?
    func create(_ input: MovieInput) async throws -> Movie
    /// Replaces a movie; `nil` when there is none with this ID.
    func replace(id: Int, with input: MovieInput) async throws -> Movie?
    /// Deletes a movie and its ratings; `false` when there is none with this ID.
    func delete(id: Int) async throws -> Bool
    /// Records a rating; `false` when there is no movie with this ID.
    func addRating(movieID: Int, stars: Int) async throws -> Bool
    /// The number and sum of a movie's ratings; `nil` when there is no movie with this ID.
    func ratingTotals(movieID: Int) async throws -> (count: Int, sum: Int)?
}
