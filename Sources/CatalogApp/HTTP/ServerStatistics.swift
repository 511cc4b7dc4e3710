import MovieCatalog
import Scoped
import ScopedSQLite

/// The server's open scopes and database connections, for checking that nothing leaks.
struct ServerStatistics: Codable, Equatable {
    /// Request scopes open now, not counting the one serving this request.
    var otherOpenScopes: Int
    var database: SQLiteDatabase.Statistics

    static func read(root: ScopeRoot) async throws -> ServerStatistics {
        ServerStatistics(
            otherOpenScopes: root.openScopeCount - 1,
            database: try await ScopedValues.current.database.statistics()
        )
    }
}
