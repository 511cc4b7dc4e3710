import PostgresNIO
import Scoped
import ScopedHummingbird
import ScopedPostgres

/// The movie history in PostgreSQL, in the current scope's PostgreSQL session.
package struct PostgresMovieHistory: MovieHistory {
    /// Creates the history; it reads the current scope's session at each call.
    package init() {}

    package func record(_ action: MovieChange.Action, movieID: Int) async throws {
        let change = RecordChange(movieID: movieID, action: action.rawValue, requestID: ScopedValues.current.requestID)
        _ = try await ScopedValues.current.postgresSession.query(change)
    }

    /// A change's row, prepared once per connection: every write of the catalog records one.
    private struct RecordChange: PostgresPreparedStatement {
        static let sql = "INSERT INTO movie_changes (movie_id, action, request_id) VALUES ($1, $2, $3)"
        static let bindingDataTypes: [PostgresDataType] = [.int8, .text, .text]
        typealias Row = Void
        var movieID: Int
        var action: String
        var requestID: String?

        func makeBindings() -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 3)
            bindings.append(movieID)
            bindings.append(action)
            bindings.append(requestID)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws {}
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
