/// The server's `/debug/stats` body.
struct ServerStatistics: Decodable {
    struct Database: Decodable {
        var connections: Int
        var leased: Int
        /// On PostgreSQL: read-only `COMMIT`s that failed after their response.
        var failedReadOnlyCommits: Int?
    }
    var otherOpenScopes: Int
    var database: Database
    /// The current root's generation: 1 at start-up, one more for each applied reload.
    var generation: Int
    /// Work the current root's requests handed off that never started or failed.
    struct HandOffs: Decodable {
        var notStarted: Int
        var failed: Int
    }
    var handOffs: HandOffs?

    static func read(port: Int) throws -> ServerStatistics {
        let response = try HTTPConnection(port: port).perform(HTTPRequest("GET", "/debug/stats"))
        return try response.json(ServerStatistics.self)
    }
}
