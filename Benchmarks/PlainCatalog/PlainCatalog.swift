import Foundation
import HTTPTypes
import Hummingbird
import Logging
import PostgresNIO
import ServiceLifecycle

/// The catalog's PostgreSQL routes as a team writes them today with Hummingbird and
/// postgres-nio alone: no Scoped, no request scope, no session.
///
/// `PostgresClient` is used as its own documentation shows: a read is one `client.query`
/// (autocommit, no transaction: one statement, one round trip); `POST /movies` writes its
/// movie in `client.withTransaction` and, once it committed, records the change in a task of
/// its own after the response, as ExampleServer hands its history write off. A tenant
/// (`X-Tenant`) is a schema (`t_<tenant>`), named in each statement. The baseline that pays
/// for none of Scoped's guarantees (`Benchmarks/round-trips.sh`).
///
/// Environment: `DATABASE_URL` (the database ExampleServer migrated), `HTTP_PORT` (8091).
@main
enum PlainCatalog {
    static func main() async throws {
        let environment = ProcessInfo.processInfo.environment
        let url = URLComponents(string: environment["DATABASE_URL"] ?? "")
        guard let url, let host = url.host, let user = url.user else {
            print("DATABASE_URL must be postgres://user@host:port/database")
            exit(2)
        }
        var configuration = PostgresClient.Configuration(
            host: host,
            port: url.port ?? 5432,
            username: user,
            password: url.password,
            database: String(url.path.dropFirst()),
            tls: .disable
        )
        configuration.options.maximumConnections = 20
        let client = PostgresClient(configuration: configuration)
        let logger = Logger(label: "PlainCatalog", factory: { _ in SwiftLogNoOpLogHandler() })
        let router = Router()
        router.get("/movies/:id") { request, context -> Response in
            let id = try context.parameters.require("id", as: Int.self)
            let schema = try Schema(request)
            let rows = try await client.query(
                PostgresQuery(
                    unsafeSQL: "SELECT id, title, year, director FROM \(schema.movies) WHERE id = $1",
                    binds: binds(id)
                )
            )
            for try await (id, title, year, director) in rows.decode((Int, String, Int, String?).self) {
                return try json(Movie(id: id, title: title, year: year, director: director))
            }
            return try json(["error": "not_found"], status: .notFound)
        }
        router.get("/movies") { request, _ -> Response in
            let limit = request.uri.queryParameters.get("limit", as: Int.self) ?? 50
            let offset = request.uri.queryParameters.get("offset", as: Int.self) ?? 0
            let schema = try Schema(request)
            // The page and the catalog's size, in one statement.
            let rows = try await client.query(
                PostgresQuery(
                    unsafeSQL: """
                        SELECT id, title, year, director, count(*) OVER () FROM \(schema.movies)
                        ORDER BY id LIMIT $1 OFFSET $2
                        """,
                    binds: binds(limit, offset)
                )
            )
            var items: [Movie] = []
            var total = 0
            for try await (id, title, year, director, count) in rows.decode((Int, String, Int, String?, Int).self) {
                items.append(Movie(id: id, title: title, year: year, director: director))
                total = count
            }
            if items.isEmpty {
                let counted = try await client.query(PostgresQuery(unsafeSQL: "SELECT count(*) FROM \(schema.movies)"))
                for try await count in counted.decode(Int.self) { total = count }
            }
            return try json(Page(items: items, total: total))
        }
        router.post("/movies") { request, context -> Response in
            let input = try await request.decode(as: MovieInput.self, context: context)
            let schema = try Schema(request)
            let id = try await client.withTransaction(logger: logger) { connection in
                let rows = try await connection.query(
                    PostgresQuery(
                        unsafeSQL:
                            "INSERT INTO \(schema.movies) (title, year, director) VALUES ($1, $2, $3) RETURNING id",
                        binds: binds(input.title, input.year, input.director)
                    ),
                    logger: logger
                )
                for try await id in rows.decode(Int.self) { return id }
                throw PostgresInsertReturnedNothing()
            }
            // The history, after the commit and the response, as ExampleServer records it.
            Task {
                try? await client.query(
                    PostgresQuery(
                        unsafeSQL: "INSERT INTO \(schema.changes) (movie_id, action) VALUES ($1, 'created')",
                        binds: binds(id)
                    )
                )
            }
            return try json(
                Movie(id: id, title: input.title, year: input.year, director: input.director),
                status: .created
            )
        }
        let app = Application(
            router: router,
            configuration: .init(
                address: .hostname("127.0.0.1", port: Int(environment["HTTP_PORT"] ?? "8091") ?? 8091),
                serverName: "PlainCatalog"
            ),
            logger: Logger(label: "PlainCatalog")
        )
        try await ServiceGroup(services: [client, app], logger: Logger(label: "PlainCatalog")).run()
    }

    /// The values as a statement's parameters.
    static func binds(_ values: Int...) -> PostgresBindings {
        var bindings = PostgresBindings(capacity: values.count)
        for value in values { bindings.append(value) }
        return bindings
    }

    static func binds(_ title: String, _ year: Int, _ director: String?) -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 3)
        bindings.append(title)
        bindings.append(year)
        bindings.append(director)
        return bindings
    }

    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        let body = try JSONEncoder().encode(value)
        return Response(
            status: status,
            headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: body))
        )
    }
}

/// Where a request's tables are: the tenant's schema (`X-Tenant`), or the connection's default.
struct Schema {
    let prefix: String

    init(_ request: Request) throws {
        guard let tenant = request.headers[HTTPField.Name("X-Tenant")!] else {
            prefix = ""
            return
        }
        // A tenant ID is `a-z`, `0-9` and `-` only, so it needs no escaping in a quoted name.
        guard !tenant.isEmpty, tenant.utf8.count <= 61,
            tenant.utf8.allSatisfy({ (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D })
        else { throw HTTPError(.badRequest, message: "X-Tenant is not a tenant ID") }
        prefix = "\"t_\(tenant)\"."
    }

    var movies: String { prefix + "movies" }
    var changes: String { prefix + "movie_changes" }
}

struct Movie: Encodable {
    var id: Int
    var title: String
    var year: Int
    var director: String?

    private enum CodingKeys: String, CodingKey { case id, title, year, director }

    /// As the catalog's API writes a movie: a missing director as `null`.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(title, forKey: .title)
        try container.encode(year, forKey: .year)
        try container.encode(director, forKey: .director)
    }
}

struct MovieInput: Decodable {
    var title: String
    var year: Int
    var director: String?
}

struct Page: Encodable {
    var items: [Movie]
    var total: Int
}

struct PostgresInsertReturnedNothing: Error {}
