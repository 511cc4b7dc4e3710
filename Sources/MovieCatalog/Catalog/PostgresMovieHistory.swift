import PostgresNIO
import Scoped
import ScopedHummingbird
import ScopedPostgres

/// The movie history in PostgreSQL, in the current scope's PostgreSQL session.
package struct PostgresMovieHistory: MovieHistory {
    /// Creates the history; it reads the current scope's session at each call.
    package init() {}

    package func record(_ action: MovieChange.Action, movieID: Int) async throws {
        try await ScopedValues.current.postgresSession.execute(
            """
            INSERT INTO movie_changes (movie_id, action, request_id)
            VALUES (\(movieID), \(action.rawValue), \(ScopedValues.current.requestID))
            """
        )
    }

    package func prune(olderThan age: Duration) async throws -> Int {
        let seconds = Double(age.components.seconds)
        return try await ScopedValues.current.postgresSession
            .query(
                "DELETE FROM movie_changes WHERE changed_at < now() - make_interval(secs => \(seconds)) RETURNING id"
            )
            .count
    }

    package func changes(movieID: Int) async throws -> [MovieChange] {
        try await ScopedValues.current.postgresSession
            .query(
                """
                SELECT movie_id, action, request_id,
                       to_char(changed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
                FROM movie_changes WHERE movie_id = \(movieID) ORDER BY id
                """
            )
            .compactMap { row in
                let (movieID, action, requestID, changedAt) = try row.decode((Int, String, String?, String).self)
                return MovieChange.Action(rawValue: action)
                    .map {
                        MovieChange(movieID: movieID, action: $0, requestID: requestID, changedAt: changedAt)
                    }
            }
    }
}
