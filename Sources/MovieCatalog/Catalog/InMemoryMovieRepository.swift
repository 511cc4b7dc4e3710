import Synchronization

/// A repository in memory: the `fixture` variant, and the mock tests swap in.
package final class InMemoryMovieRepository: MovieRepository {
    private struct State {
        package var movies: [Int: Movie] = [:]
        package var ratings: [Int: [Int]] = [:]
        package var nextID = 1
    }

    private let state: Mutex<State>

    /// A repository holding `movies`; new movies get IDs after the highest one.
    package init(movies: [Movie] = []) {
        var state = State()
        for movie in movies { state.movies[movie.id] = movie }
        state.nextID = (movies.map(\.id).max() ?? 0) + 1
        self.state = Mutex(state)
    }

    /// The fixture catalog: exactly these three movies.
    package static func fixture() -> InMemoryMovieRepository {
        InMemoryMovieRepository(movies: [
            Movie(id: 1, title: "Toy Story", year: 1995, director: "John Lasseter"),
            Movie(id: 2, title: "A Bug's Life", year: 1998, director: "John Lasseter"),
            Movie(id: 3, title: "Toy Story 2", year: 1999, director: "John Lasseter"),
        ])
    }

    package func page(limit: Int, offset: Int) async throws -> MoviePage {
        state.withLock { state in
            let sorted = state.movies.values.sorted { $0.id < $1.id }
            return MoviePage(items: Array(sorted.dropFirst(offset).prefix(limit)), total: sorted.count)
        }
    }

    package func movies(after id: Int, limit: Int) async throws -> [Movie] {
        state.withLock { state in
            Array(state.movies.values.filter { $0.id > id }.sorted { $0.id < $1.id }.prefix(limit))
        }
    }

    package func movie(id: Int) async throws -> Movie? {
        state.withLock { $0.movies[id] }
    }

    package func create(_ input: MovieInput) async throws -> Movie {
        state.withLock { state in
            let movie = Movie(id: state.nextID, title: input.title, year: input.year, director: input.director)
            state.movies[movie.id] = movie
            state.nextID += 1
            return movie
        }
    }

    package func replace(id: Int, with input: MovieInput) async throws -> Movie? {
        state.withLock { state in
            guard state.movies[id] != nil else { return nil }
            let movie = Movie(id: id, title: input.title, year: input.year, director: input.director)
            state.movies[id] = movie
            return movie
        }
    }

    package func delete(id: Int) async throws -> Bool {
        state.withLock { state in
            state.ratings[id] = nil
            return state.movies.removeValue(forKey: id) != nil
        }
    }

    package func addRating(movieID: Int, stars: Int) async throws -> Bool {
        state.withLock { state in
            guard state.movies[movieID] != nil else { return false }
            state.ratings[movieID, default: []].append(stars)
            return true
        }
    }

    package func ratingTotals(movieID: Int) async throws -> (count: Int, sum: Int)? {
        state.withLock { state in
            guard state.movies[movieID] != nil else { return nil }
            let ratings = state.ratings[movieID] ?? []
            return (ratings.count, ratings.reduce(0, +))
        }
    }
}
