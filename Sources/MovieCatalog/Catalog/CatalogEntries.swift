package import Scoped
package import ScopedDiagnostics

extension ScopedValues {
    /// The catalog's repository: SQLite in production, swapped for memory in tests and by the `fixture` variant.
    ///
    /// Live-only: a test that reads it without overriding it fails.
    @Entry(testValue: UnimplementedMovieRepository())
    package var movieRepository: any MovieRepository = SQLiteMovieRepository()

    /// The ratings service.
    @Entry package var ratingService: MovieRatingService = MovieRatingService()

    /// The record of changes to movies, in the database the movies are in.
    @Entry package var movieHistory: any MovieHistory = SQLiteMovieHistory()
}

/// The named variants configuration can choose, at the root or per request.
///
/// The database backend is chosen one way: every entry that depends on it has a variant named
/// after each backend (`sqlite`, its default, and `postgres`), and the root selects the one
/// `database.kind` names for all of them (``backendEntries``).
package enum CatalogVariants {
    package static let entry = "movieRepository"

    /// The entries whose variant follows `database.kind`: the repository (unless configuration
    /// chose another of its variants, such as `fixture`) and what is registered with them here.
    package static let backendEntries = ["movieRepository", "movieHistory"]

    package static func make() -> ScopedVariants {
        var variants = ScopedVariants()
        variants.register("sqlite", of: \.movieRepository) { SQLiteMovieRepository() }
        variants.register("fixture", of: \.movieRepository) { InMemoryMovieRepository.fixture() }
        variants.register("postgres", of: \.movieRepository) { PostgresMovieRepository() }
        variants.register("sqlite", of: \.movieHistory) { SQLiteMovieHistory() }
        variants.register("postgres", of: \.movieHistory) { PostgresMovieHistory() }
        return variants
    }
}
