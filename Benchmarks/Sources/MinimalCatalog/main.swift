import Foundation
import Hummingbird
import ScopedSQLite

// The example server's `GET /movies/{id}` at its most minimal: the database is passed to the handler
// directly, each request runs one read transaction, no scope is opened and no middleware runs. The load
// benchmark (`Benchmarks/load.sh`) compares it with the real ExampleServer.

// Encoded exactly as the example server encodes it: sorted keys, `"director": null` kept.
struct Movie: Codable, ResponseEncodable {
    var id: Int
    var title: String
    var year: Int
    var director: String?

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(title, forKey: .title)
        try container.encode(year, forKey: .year)
        try container.encode(director, forKey: .director)
    }
}

let environment = ProcessInfo.processInfo.environment
let database = try SQLiteDatabase(SQLiteConfiguration(path: environment["DATABASE_PATH"] ?? "handwired.sqlite"))
let router = Router()
router.get("/movies/:id") { _, context -> Response in
    guard let text = context.parameters.get("id"), let id = Int(text), id > 0 else {
        return Response(status: .badRequest)
    }
    let movies = try await database.read { connection in
        try connection.query("SELECT id, title, year, director FROM movies WHERE id = \(id)", as: Movie.self)
    }
    guard let movie = movies.first else { return Response(status: .notFound) }
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    let body = try encoder.encode(movie)
    return Response(
        status: .ok,
        headers: [.contentType: "application/json; charset=utf-8"],
        body: .init(byteBuffer: ByteBuffer(bytes: body))
    )
}
let app = Application(
    router: router,
    configuration: .init(address: .hostname("127.0.0.1", port: Int(environment["HTTP_PORT"] ?? "8090") ?? 8090))
)
try await app.runService()
