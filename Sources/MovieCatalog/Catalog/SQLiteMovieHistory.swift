import Scoped
import ScopedHummingbird
import ScopedSQLite

/// The movie history in the SQLite database, in the current scope's SQLite session.
package struct SQLiteMovieHistory: MovieHistory {
    /// Creates the history; it reads the current scope's session at each call.
    package init() {}

    /// Records `action` on a movie, naming the current request.
    package func record(_ action: MovieChange.Action, movieID: Int) async throws {
        let session = try await ScopedValues.current.sqliteSession
        _ = try await session.insert(
            """
            INSERT INTO movie_changes (movie_id, action, request_id)
            VALUES (\(movieID), \(action.rawValue), \(ScopedValues.current.requestID))
            """
        )
    }

    /// Deletes the changes recorded more than `age` ago.
    ///
    /// - Returns: how many were deleted.
    package func prune(olderThan age: Duration) async throws -> Int {
        let modifier = "-\(age.components.seconds) seconds"
        return try await ScopedValues.current.sqliteSession.execute(
            """
            DELETE FROM movie_changes
            WHERE changed_at < strftime('%Y-%m-%dT%H:%M:%fZ', 'now', \(modifier))
            """
        )
    }

    /// A movie's changes, oldest first; empty for a movie never changed through the API.
    package func changes(movieID: Int) async throws -> [MovieChange] {
        try await ScopedValues.current.sqliteSession
            .query(
                """
                SELECT movie_id AS movieID, action, request_id AS requestID, changed_at AS changedAt
                FROM movie_changes WHERE movie_id = \(movieID) ORDER BY id
                """,
                as: Row.self
            )
            .compactMap { row in
                MovieChange.Action(rawValue: row.action)
                    .map {
                        MovieChange(
                            movieID: row.movieID,
                            action: $0,
                            requestID: row.requestID,
                            changedAt: row.changedAt
                        )
                    }
            }
    }

    /// A row of `movie_changes`; its `action` is checked by the table.
    private struct Row: Decodable {
        var movieID: Int
        var action: String
        var requestID: String?
        var changedAt: String
    }
}
