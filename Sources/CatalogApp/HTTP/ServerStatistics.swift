import Scoped

/// The server's open scopes and database connections, for checking that nothing leaks.
struct ServerStatistics: Codable, Equatable {
    /// Request scopes open now, not counting the one serving this request.
    var otherOpenScopes: Int
    /// The database's connections, on either backend.
    var database: DatabaseStatistics

    static func read(root: ScopeRoot) async throws -> ServerStatistics {
        ServerStatistics(
            otherOpenScopes: root.openScopeCount - 1,
            database: try await ScopedValues.current.debugDatabase.statistics()
        )
    }
}
