import Scoped

extension ScopedValues {
    /// The catalog's repository: SQLite in production, swapped for memory in tests and by the `fixture` variant.
    ///
    /// Live-only: a test that reads it without overriding it fails.
    @Entry(testValue: UnimplementedMovieRepository())
    var movieRepository: any MovieRepository = SQLiteMovieRepository()

    /// The ratings service.
    @Entry var ratingService: MovieRatingService = MovieRatingService()
}

/// The named variants configuration can choose, at the root or per request.
enum CatalogVariants {
    static let entry = "movieRepository"

    static func make() -> ScopedVariants {
        var variants = ScopedVariants()
        variants.register("sqlite", of: \.movieRepository) { SQLiteMovieRepository() }
        variants.register("fixture", of: \.movieRepository) { InMemoryMovieRepository.fixture() }
        return variants
    }
}
