import Scoped
import ScopedSQLite

/// ``DebugDatabase`` on the SQLite file: `SELECT ?` on the request's session, and the pool's
/// readers and writer.
struct SQLiteDebugDatabase: DebugDatabase {
    func echo(_ text: String?) async throws -> String? {
        try await ScopedValues.current.sqliteSession.scalar("SELECT \(text)", as: String.self)
    }

    func statistics() async throws -> DatabaseStatistics {
        let statistics = try await ScopedValues.current.sqliteDatabase.statistics()
        return DatabaseStatistics(connections: statistics.connections, leased: statistics.leased)
    }
}
