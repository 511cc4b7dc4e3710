import PostgresNIO
import Scoped
import ScopedPostgres

/// ``DebugDatabase`` on PostgreSQL: `SELECT $1::text` on the request's session, and the
/// connections the sessions hold.
struct PostgresDebugDatabase: DebugDatabase {
    func echo(_ text: String?) async throws -> String? {
        try await ScopedValues.current.postgresSession.query("SELECT \(text)::text")[0].decode(String?.self)
    }

    func statistics() async throws -> DatabaseStatistics {
        let statistics = try await ScopedValues.current.postgresDatabase.statistics()
        return DatabaseStatistics(
            connections: statistics.connections,
            leased: statistics.leased,
            failedReadOnlyCommits: statistics.failedReadOnlyCommits
        )
    }
}
