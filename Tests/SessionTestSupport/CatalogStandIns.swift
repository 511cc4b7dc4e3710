public import Scoped

// What the adapters' doc-comment examples assume: a movie catalog read through
// `ScopedValues.movieRepository`. Their tests compile each example verbatim against these.

/// A movie, as the examples show one.
public struct Movie: Codable, Sendable, Equatable {
    /// The movie's ID.
    public var id: Int
    /// The movie's title.
    public var title: String

    /// A movie.
    public init(id: Int, title: String) {
        self.id = id
        self.title = title
    }
}

/// The catalog the examples read.
public protocol MovieRepository: Sendable {
    /// The movie with `id`, or `nil`.
    func movie(id: Int) async throws -> Movie?
    /// Every movie, in ID order.
    func all() async throws -> [Movie]
}

/// A catalog of the movies it was made with.
public struct ListedMovieRepository: MovieRepository {
    /// The catalog's movies.
    public var movies: [Movie]

    /// A catalog of `movies`.
    public init(_ movies: [Movie]) { self.movies = movies }

    /// The movie with `id`, or `nil`.
    public func movie(id: Int) async throws -> Movie? { movies.first { $0.id == id } }
    /// Every movie, in ID order.
    public func all() async throws -> [Movie] { movies.sorted { $0.id < $1.id } }
}

extension ScopedValues {
    /// The catalog: by default two movies, Heat (1) and Alien (2).
    public var movieRepository: any MovieRepository {
        get { self[MovieRepositoryKey.self] }
        set { self[MovieRepositoryKey.self] = newValue }
    }
}

private struct MovieRepositoryKey: ScopedKey {
    static let defaultValue: any MovieRepository = ListedMovieRepository([
        Movie(id: 1, title: "Heat"), Movie(id: 2, title: "Alien"),
    ])
}
