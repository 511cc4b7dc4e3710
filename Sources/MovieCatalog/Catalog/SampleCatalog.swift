import Scoped

/// The movies a development database starts with.
package enum SampleCatalog {
    /// The header the development profile reads to pick a `movieRepository` variant.
    package static let overrideHeader = "X-Catalog"

    package static let movies = [
        MovieInput(title: "Toy Story", year: 1995, director: "John Lasseter"),
        MovieInput(title: "Spirited Away", year: 2001, director: "Hayao Miyazaki"),
        MovieInput(title: "The Matrix", year: 1999, director: "Lana Wachowski, Lilly Wachowski"),
        MovieInput(title: "Amélie", year: 2001, director: "Jean-Pierre Jeunet"),
        MovieInput(title: "Parasite", year: 2019, director: "Bong Joon-ho"),
        MovieInput(title: "Metropolis", year: 1927, director: "Fritz Lang"),
    ]

    /// Inserts the sample movies when the catalog is empty; returns how many were inserted.
    package static func seedIfEmpty() async throws -> Int {
        let repository = ScopedValues.current.movieRepository
        guard try await repository.page(limit: 1, offset: 0).total == 0 else { return 0 }
        for movie in movies { _ = try await repository.create(movie) }
        return movies.count
    }
}
