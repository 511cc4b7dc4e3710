import Scoped
package import ScopedSQLite

/// The production repository: the request's SQLite session, read from the scope at each call, so every statement of a
/// request runs in that request's session. (The hand-wired server of the load benchmark passes a session instead.)
///
/// A request that writes opens its scope with `TransactionMode.readWrite`, so its checks and its
/// writes share one transaction; a read-only request reads in one read transaction.
package struct SQLiteMovieRepository: MovieRepository {
    package static let migrations = [
        SQLiteMigration(
            version: 1,
            name: "create movies and ratings",
            statements: [
                """
                CREATE TABLE movies (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    title TEXT NOT NULL,
                    year INTEGER NOT NULL,
                    director TEXT
                );
                CREATE TABLE ratings (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    movie_id INTEGER NOT NULL REFERENCES movies(id) ON DELETE CASCADE,
                    stars INTEGER NOT NULL CHECK (stars BETWEEN 1 AND 5)
                );
                CREATE INDEX ratings_by_movie ON ratings (movie_id);
                """
            ]
        ),
        SQLiteMigration(
            version: 2,
            name: "create movie_changes",
            statements: [
                """
                CREATE TABLE movie_changes (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    movie_id INTEGER NOT NULL,
                    action TEXT NOT NULL CHECK (action IN ('created', 'replaced', 'deleted')),
                    request_id TEXT,
                    changed_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
                );
                CREATE INDEX movie_changes_by_movie ON movie_changes (movie_id);
                """
            ]
        ),
    ]

    private let currentSession: @Sendable () async throws -> SQLiteSession

    /// A repository on the current scope's session.
    package init() {
        currentSession = { try await ScopedValues.current.sqliteSession }
    }

    /// A repository on `session`, passed by hand instead of read from a scope.
    package init(session: SQLiteSession) {
        currentSession = { session }
    }

    private var session: SQLiteSession {
        get async throws { try await currentSession() }
    }

    package func page(limit: Int, offset: Int) async throws -> MoviePage {
        let session = try await session
        let items = try await session.query(
            "SELECT id, title, year, director FROM movies ORDER BY id LIMIT \(limit) OFFSET \(offset)",
            as: Movie.self
        )
        let total = try await session.scalar("SELECT count(*) FROM movies", as: Int.self) ?? 0
        return MoviePage(items: items, total: total)
    }

    package func movies(after id: Int, limit: Int) async throws -> [Movie] {
        try await session.query(
            "SELECT id, title, year, director FROM movies WHERE id > \(id) ORDER BY id LIMIT \(limit)",
            as: Movie.self
        )
    }

    package func movie(id: Int) async throws -> Movie? {
        try await session.query("SELECT id, title, year, director FROM movies WHERE id = \(id)", as: Movie.self).first
    }

    package func create(_ input: MovieInput) async throws -> Movie {
        let id = try await session.insert(
            "INSERT INTO movies (title, year, director) VALUES (\(input.title), \(input.year), \(input.director))"
        )
        return Movie(id: Int(id), title: input.title, year: input.year, director: input.director)
    }

    package func replace(id: Int, with input: MovieInput) async throws -> Movie? {
        let changed = try await session.execute(
            "UPDATE movies SET title = \(input.title), year = \(input.year), director = \(input.director) WHERE id = \(id)"
        )
        return changed == 0 ? nil : Movie(id: id, title: input.title, year: input.year, director: input.director)
    }

    package func delete(id: Int) async throws -> Bool {
        try await session.execute("DELETE FROM movies WHERE id = \(id)") > 0
    }

    package func addRating(movieID: Int, stars: Int) async throws -> Bool {
        let session = try await session
        guard try await session.scalar("SELECT count(*) FROM movies WHERE id = \(movieID)", as: Int.self) == 1 else {
            return false
        }
        _ = try await session.insert("INSERT INTO ratings (movie_id, stars) VALUES (\(movieID), \(stars))")
        return true
    }

    package func ratingTotals(movieID: Int) async throws -> (count: Int, sum: Int)? {
        let session = try await session
        guard try await session.scalar("SELECT count(*) FROM movies WHERE id = \(movieID)", as: Int.self) == 1 else {
            return nil
        }
        let rows = try await session.query(
            "SELECT count(*) AS count, coalesce(sum(stars), 0) AS total FROM ratings WHERE movie_id = \(movieID)"
        )
        guard let row = rows.first else { return (0, 0) }
        return (try row.get("count", as: Int.self), try row.get("total", as: Int.self))
    }
}
