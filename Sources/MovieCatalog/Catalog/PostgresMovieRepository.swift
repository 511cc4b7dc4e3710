import PostgresNIO
import Scoped
package import ScopedPostgres

/// The repository on PostgreSQL, for a catalog that runs several server instances on one
/// database: the request's PostgreSQL session, read from the scope at each call.
///
/// A read-only request reads without a transaction (each statement on its own, on a connection
/// that refuses writes), a request that may write in one read-write transaction. The statements
/// a request runs most are prepared (``Statements``): parsed and planned once per connection.
/// A page and its total come from one statement (`count(*) OVER ()`), so they agree without a
/// snapshot of their own.
package struct PostgresMovieRepository: MovieRepository {
    package static let migrations = [
        PostgresMigration(
            version: 1,
            name: "create movies and ratings",
            statements: [
                """
                CREATE TABLE movies (
                    id serial PRIMARY KEY,
                    title text NOT NULL,
                    year integer NOT NULL,
                    director text
                )
                """,
                """
                CREATE TABLE ratings (
                    id serial PRIMARY KEY,
                    movie_id integer NOT NULL REFERENCES movies(id) ON DELETE CASCADE,
                    stars integer NOT NULL CHECK (stars BETWEEN 1 AND 5)
                )
                """,
                "CREATE INDEX ratings_by_movie ON ratings (movie_id)",
            ]
        ),
        PostgresMigration(
            version: 2,
            name: "create movie_changes",
            statements: [
                """
                CREATE TABLE movie_changes (
                    id bigserial PRIMARY KEY,
                    movie_id integer NOT NULL,
                    action text NOT NULL CHECK (action IN ('created', 'replaced', 'deleted')),
                    request_id text,
                    changed_at timestamptz NOT NULL DEFAULT now()
                )
                """,
                "CREATE INDEX movie_changes_by_movie ON movie_changes (movie_id)",
            ]
        ),
    ]

    private let currentSession: @Sendable () async throws -> PostgresSession

    /// A repository on the current scope's session.
    package init() {
        currentSession = { try await ScopedValues.current.postgresSession }
    }

    /// A repository on `session`, passed by hand instead of read from a scope (the load
    /// benchmark's hand-wired server).
    package init(session: PostgresSession) {
        currentSession = { session }
    }

    private var session: PostgresSession {
        get async throws { try await currentSession() }
    }

    private static func movies(_ rows: [PostgresRow]) throws -> [Movie] {
        try rows.map { row in
            let (id, title, year, director) = try row.decode((Int, String, Int, String?).self)
            return Movie(id: id, title: title, year: year, director: director)
        }
    }

    package func page(limit: Int, offset: Int) async throws -> MoviePage {
        let session = try await session
        let rows = try await session.query(Statements.Page(limit: limit, offset: offset))
        // A page past the last movie carries no total: counted apart, only then.
        guard let total = rows.first?.total else {
            return MoviePage(items: [], total: try await session.query(Statements.Count())[0])
        }
        return MoviePage(items: rows.map(\.movie), total: total)
    }

    package func movies(after id: Int, limit: Int) async throws -> [Movie] {
        try Self.movies(
            await session.query(
                "SELECT id, title, year, director FROM movies WHERE id > \(id) ORDER BY id LIMIT \(limit)"
            )
        )
    }

    package func movie(id: Int) async throws -> Movie? {
        try await session.query(Statements.MovieByID(id: id)).first
    }

    package func create(_ input: MovieInput) async throws -> Movie {
        let id = try await session.query(Statements.Insert(input: input))[0]
        return Movie(id: id, title: input.title, year: input.year, director: input.director)
    }

    package func replace(id: Int, with input: MovieInput) async throws -> Movie? {
        let changed = try await session.query(
            """
            UPDATE movies SET title = \(input.title), year = \(input.year), director = \(input.director)
            WHERE id = \(id) RETURNING id
            """
        )
        return changed.isEmpty ? nil : Movie(id: id, title: input.title, year: input.year, director: input.director)
    }

    package func delete(id: Int) async throws -> Bool {
        try await !session.query("DELETE FROM movies WHERE id = \(id) RETURNING id").isEmpty
    }

    package func addRating(movieID: Int, stars: Int) async throws -> Bool {
        // One statement: no movie, no row inserted.
        try await
            !session.query(
                "INSERT INTO ratings (movie_id, stars) SELECT id, \(stars) FROM movies WHERE id = \(movieID) RETURNING id"
            )
            .isEmpty
    }

    package func ratingTotals(movieID: Int) async throws -> (count: Int, sum: Int)? {
        let rows = try await session.query(
            """
            SELECT count(r.id), coalesce(sum(r.stars), 0)::bigint
            FROM movies m LEFT JOIN ratings r ON r.movie_id = m.id
            WHERE m.id = \(movieID) GROUP BY m.id
            """
        )
        guard let row = rows.first else { return nil }
        let (count, sum) = try row.decode((Int, Int).self)
        return (count, sum)
    }
}

extension PostgresMovieRepository {
    /// The repository's most frequent statements, prepared once per connection.
    enum Statements {
        /// One movie by its ID.
        struct MovieByID: PostgresPreparedStatement {
            static let sql = "SELECT id, title, year, director FROM movies WHERE id = $1"
            static let bindingDataTypes: [PostgresDataType] = [.int8]
            typealias Row = Movie
            var id: Int

            func makeBindings() -> PostgresBindings {
                var bindings = PostgresBindings(capacity: 1)
                bindings.append(id)
                return bindings
            }

            func decodeRow(_ row: PostgresRow) throws -> Movie { try Statements.movie(row) }
        }

        /// A page of movies by ID, each row with the number of movies in all.
        struct Page: PostgresPreparedStatement {
            static let sql = """
                SELECT id, title, year, director, count(*) OVER () FROM movies ORDER BY id LIMIT $1 OFFSET $2
                """
            static let bindingDataTypes: [PostgresDataType] = [.int8, .int8]
            typealias Row = (movie: Movie, total: Int)
            var limit: Int
            var offset: Int

            func makeBindings() -> PostgresBindings {
                var bindings = PostgresBindings(capacity: 2)
                bindings.append(limit)
                bindings.append(offset)
                return bindings
            }

            func decodeRow(_ row: PostgresRow) throws -> Row {
                let (id, title, year, director, total) = try row.decode((Int, String, Int, String?, Int).self)
                return (Movie(id: id, title: title, year: year, director: director), total)
            }
        }

        /// The number of movies.
        struct Count: PostgresPreparedStatement {
            static let sql = "SELECT count(*) FROM movies"
            typealias Row = Int

            func makeBindings() -> PostgresBindings { PostgresBindings() }

            func decodeRow(_ row: PostgresRow) throws -> Int { try row.decode(Int.self) }
        }

        /// A new movie; its row is its ID.
        struct Insert: PostgresPreparedStatement {
            static let sql = "INSERT INTO movies (title, year, director) VALUES ($1, $2, $3) RETURNING id"
            static let bindingDataTypes: [PostgresDataType] = [.text, .int8, .text]
            typealias Row = Int
            var input: MovieInput

            func makeBindings() -> PostgresBindings {
                var bindings = PostgresBindings(capacity: 3)
                bindings.append(input.title)
                bindings.append(input.year)
                bindings.append(input.director)
                return bindings
            }

            func decodeRow(_ row: PostgresRow) throws -> Int { try row.decode(Int.self) }
        }

        static func movie(_ row: PostgresRow) throws -> Movie {
            let (id, title, year, director) = try row.decode((Int, String, Int, String?).self)
            return Movie(id: id, title: title, year: year, director: director)
        }
    }
}
