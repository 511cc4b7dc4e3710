import MovieCatalog
import Scoped
import ScopedPostgres
import ScopedSQLite

/// The server's open scopes and database connections, for checking that nothing leaks.
struct ServerStatistics: Codable, Equatable {
    /// Request scopes open now, not counting the one serving this request.
    var otherOpenScopes: Int
    /// The SQLite database's connections; `nil` on PostgreSQL, whose server reports its own
    /// (`pg_stat_activity`).
    var database: SQLiteDatabase.Statistics?

    static func read(root: ScopeRoot) async throws -> ServerStatistics {
        let isPostgres = ScopedValues.current.postgresConfiguration != nil
        return ServerStatistics(
            otherOpenScopes: root.openScopeCount - 1,
            database: isPostgres ? nil : try await ScopedValues.current.database.statistics()
        )
    }
}
