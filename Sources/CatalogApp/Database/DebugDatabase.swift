import Scoped

/// What the debug routes ask of the catalog's database, whichever backend configuration chose:
/// a round-trip through the request's session, and the connection counts.
///
/// An entry rather than a check of the configuration, so that `/debug/echo` and `/debug/stats`
/// stay one route each and a third backend is one more conformance.
protocol DebugDatabase: Sendable {
    /// Sends `text` through the current scope's session as a bound parameter and returns what
    /// the database sent back.
    func echo(_ text: String?) async throws -> String?
    /// The database's connections now: how many there may be and how many are leased.
    func statistics() async throws -> DatabaseStatistics
}

/// Connection counts, the same on every backend.
struct DatabaseStatistics: Codable, Equatable {
    /// The most connections the database holds.
    var connections: Int
    /// Connections leased to a session right now.
    var leased: Int
    /// On PostgreSQL: read-only `COMMIT`s that failed after their scope had ended.
    var failedReadOnlyCommits: Int? = nil
}

extension ScopedValues {
    /// The catalog database's debug view; the PostgreSQL root sets ``PostgresDebugDatabase``.
    @Entry var debugDatabase: any DebugDatabase = SQLiteDebugDatabase()
}
