import Scoped

/// The server's open scopes and database connections, for checking that nothing leaks, and
/// which configuration it serves.
struct ServerStatistics: Codable, Equatable {
    /// Request scopes open now on the current root, not counting the one serving this request.
    var otherOpenScopes: Int
    /// The database's connections, on either backend.
    var database: DatabaseStatistics
    /// The current root's generation: 1 at start-up, one more for each applied reload.
    var generation: Int
    /// Reloads applied and rejected since start-up.
    var reloads: ReloadCounts

    static func read(root: ReloadableScopeRoot, reloads: ReloadCounts) async throws -> ServerStatistics {
        ServerStatistics(
            otherOpenScopes: root.current.openScopeCount - 1,
            database: try await ScopedValues.current.debugDatabase.statistics(),
            generation: root.generation,
            reloads: reloads
        )
    }
}
