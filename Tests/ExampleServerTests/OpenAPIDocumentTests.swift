import MovieCatalog
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOFoundationCompat
import Scoped
import ScopedTestSupport
import ScopedTesting
import Testing

@testable import CatalogApp

/// The OpenAPI document served at `/openapi.json` says what the server really does.
@Suite(.scoped { $0.movieRepository = SQLiteMovieRepository() })
struct OpenAPIDocumentTests {
    /// The document, parsed.
    private let document: [String: Any] =
        (try? JSONSerialization.jsonObject(with: Data(OpenAPIDocument.json.utf8))) as? [String: Any] ?? [:]

    /// Every documented operation as `METHOD /path/:param`.
    private var documentedRoutes: Set<String> {
        let paths = document["paths"] as? [String: [String: Any]] ?? [:]
        var routes: Set<String> = []
        for (path, item) in paths {
            let routerPath = path.replacingOccurrences(of: "{", with: ":").replacingOccurrences(of: "}", with: "")
            for method in item.keys where method != "parameters" {
                routes.insert("\(method.uppercased()) \(routerPath)")
            }
        }
        return routes
    }

    /// The statuses documented for `method` on `path` (as the document writes the path).
    private func documentedStatuses(_ method: String, _ path: String) -> Set<Int> {
        let paths = document["paths"] as? [String: [String: Any]] ?? [:]
        let operation = paths[path]?[method] as? [String: Any] ?? [:]
        let responses = operation["responses"] as? [String: Any] ?? [:]
        return Set(responses.keys.compactMap(Int.init))
    }

    /// The required keys of the schema a response documents, following one `$ref`.
    private func requiredKeys(_ method: String, _ path: String, status: Int) -> [String] {
        let paths = document["paths"] as? [String: [String: Any]] ?? [:]
        let operation = paths[path]?[method] as? [String: Any] ?? [:]
        var response = (operation["responses"] as? [String: Any])?["\(status)"] as? [String: Any] ?? [:]
        if let reference = response["$ref"] as? String { response = resolve(reference) }
        let content = response["content"] as? [String: Any]
        var schema = (content?["application/json"] as? [String: Any])?["schema"] as? [String: Any] ?? [:]
        if let reference = schema["$ref"] as? String { schema = resolve(reference) }
        return schema["required"] as? [String] ?? []
    }

    private func resolve(_ reference: String) -> [String: Any] {
        var node: Any = document
        for component in reference.dropFirst(2).split(separator: "/") {
            node = (node as? [String: Any])?[String(component)] ?? [:]
        }
        return node as? [String: Any] ?? [:]
    }

    @Test func isOpenAPI31AndServedAtOpenAPIJSON() async throws {
        #expect(document["openapi"] as? String == "3.1.0")
        let folder = try TemporaryFolder()
        let (app, root) = try await makeApplication(try await loadConfiguration(.production, folder: folder))
        try await app.test(.router) { client in
            try await client.execute(uri: "/openapi.json", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType]?.hasPrefix("application/json") == true)
                #expect(String(buffer: response.body) == OpenAPIDocument.json)
            }
        }
        await root.shutdown()
    }

    @Test func documentsExactlyTheRoutesProductionServes() async throws {
        let folder = try TemporaryFolder()
        let configuration = try await loadConfiguration(.production, folder: folder)
        let root = try CatalogServer.makeRoot(configuration)
        let served = Set(
            CatalogServer.makeRouter(root: root, configuration: configuration).routes.routes
                .map { "\($0.method.rawValue) \($0.path)" }
        )
        #expect(!served.isEmpty)
        #expect(documentedRoutes == served)
        await root.shutdown()
    }

    /// One request per operation, against the seeded development server: each answers with a
    /// status the document lists, and a JSON body with the keys its schema requires.
    @Test(arguments: [
        ("get", "/health", "/health", nil as String?, 200),
        ("get", "/metrics", "/metrics", nil, 200),
        ("get", "/openapi.json", "/openapi.json", nil, 200),
        ("get", "/movies", "/movies?limit=2", nil, 200),
        ("get", "/movies", "/movies?limit=0", nil, 400),
        ("post", "/movies", "/movies", #"{"title":"Up","year":2009,"director":null}"#, 201),
        ("post", "/movies", "/movies", #"{"title":"","year":2009}"#, 422),
        ("post", "/movies", "/movies", #"{"title":"#, 400),
        ("get", "/movies/{id}", "/movies/1", nil, 200),
        ("get", "/movies/{id}", "/movies/999999", nil, 404),
        ("get", "/movies/{id}", "/movies/x", nil, 400),
        ("put", "/movies/{id}", "/movies/1", #"{"title":"Toy Story","year":1995}"#, 200),
        ("put", "/movies/{id}", "/movies/999999", #"{"title":"Heat","year":1995}"#, 404),
        ("delete", "/movies/{id}", "/movies/2", nil, 204),
        ("delete", "/movies/{id}", "/movies/999999", nil, 404),
        ("post", "/movies/{id}/ratings", "/movies/1/ratings", #"{"stars":4}"#, 201),
        ("post", "/movies/{id}/ratings", "/movies/1/ratings", #"{"stars":9}"#, 422),
        ("post", "/movies/{id}/ratings", "/movies/999999/ratings", #"{"stars":4}"#, 404),
        ("get", "/movies/{id}/rating", "/movies/1/rating", nil, 200),
        ("get", "/movies/{id}/rating", "/movies/999999/rating", nil, 404),
        ("get", "/movies/live", "/movies/live", nil, 426),
        ("get", "/changes", "/changes?movieID=1", nil, 200),
        ("get", "/changes", "/changes?movieID=x", nil, 400),
        ("get", "/changes", "/changes", nil, 400),
    ])
    func everyOperationAnswersAsDocumented(method: String, path: String, uri: String, body: String?, status: Int)
        async throws
    {
        #expect(documentedStatuses(method, path).contains(status), "\(status) is not documented for \(method) \(path)")
        let required = requiredKeys(method, path, status: status)
        let folder = try TemporaryFolder()
        let (app, root) = try await makeApplication(try await loadConfiguration(.development, folder: folder))
        try await app.test(.router) { client in
            try await client.execute(
                uri: uri,
                method: HTTPRequest.Method(rawValue: method.uppercased())!,
                body: body.map { json($0) }
            ) { response in
                #expect(response.status.code == status, "\(String(buffer: response.body))")
                if !required.isEmpty {
                    let object = response.object
                    #expect(required.allSatisfy { object.keys.contains($0) }, "\(required) in \(object)")
                }
            }
        }
        await root.shutdown()
    }
}
