/// The server's `/debug/stats` body.
struct ServerStatistics: Decodable {
    struct Database: Decodable {
        var connections: Int
        var leased: Int
    }
    var otherOpenScopes: Int
    var database: Database

    static func read(port: Int) throws -> ServerStatistics {
        let response = try HTTPConnection(port: port).perform(HTTPRequest("GET", "/debug/stats"))
        return try response.json(ServerStatistics.self)
    }
}
