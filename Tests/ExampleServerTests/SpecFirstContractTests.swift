import MovieCatalog
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Scoped
import ScopedTesting
import Testing

@testable import CatalogApp
import ScopedTestSupport

/// The catalog's handlers are generated from `openapi.yaml`: what the generated server refuses
/// to decode still answers with the contract's error, naming the field, with the message the
/// hand-written decoding gave.
@Suite(.scoped { $0.movieRepository = InMemoryMovieRepository.fixture() })
struct SpecFirstContractTests {
    private func withApp(_ test: @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        let folder = try TemporaryFolder()
        let (app, root) = try await makeApplication(try await loadConfiguration(.test, folder: folder))
        try await app.test(.router, test)
        await root.shutdown()
    }

    /// Each request, the status, code, field and message it is answered with.
    private static let undecodable: [(String, String, String?, Int, String, String?, String)] = [
        (
            "GET", "/movies?limit=abc", nil as String?, 400, "invalid_query", "limit" as String?,
            "limit must be an integer of at least 1 and at most 500."
        ),
        (
            "GET", "/movies?limit=501", nil, 400, "invalid_query", "limit",
            "limit must be an integer of at least 1 and at most 500."
        ),
        (
            "GET", "/movies?offset=99999999999999999999", nil, 400, "invalid_query", "offset",
            "offset must be an integer of at least 0."
        ),
        ("GET", "/changes", nil, 400, "invalid_query", "movieID", "movieID is required."),
        ("GET", "/changes?limit=5", nil, 400, "invalid_query", "movieID", "movieID is required."),
        ("POST", "/movies?movieID=x&limit=x", #"{"title":"Up"}"#, 422, "invalid_field", "year", "year is required."),
        ("POST", "/movies", #"{"title":"Up","year":1e300}"#, 422, "invalid_field", "year", "year must be an integer."),
        (
            "GET", "/changes?movieID=x", nil, 400, "invalid_query", "movieID",
            "movieID must be an integer of at least 1."
        ),
        (
            "GET", "/changes?movieID=0", nil, 400, "invalid_query", "movieID",
            "movieID must be an integer of at least 1."
        ),
        ("GET", "/movies/x", nil, 400, "invalid_id", "id", "The id must be a positive integer."),
        ("GET", "/movies/0", nil, 400, "invalid_id", "id", "The id must be a positive integer."),
        ("DELETE", "/movies/99999999999999999999", nil, 400, "invalid_id", "id", "The id must be a positive integer."),
        ("POST", "/movies", #"{"year":2000}"#, 422, "invalid_field", "title", "title is required."),
        ("POST", "/movies", #"{"title":5,"year":2000}"#, 422, "invalid_field", "title", "title must be a string."),
        ("PUT", "/movies/1", #"{"title":"Up","year":"x"}"#, 422, "invalid_field", "year", "year must be an integer."),
        (
            "POST", "/movies", #"{"title":"Up","year":1800}"#, 422, "invalid_field", "year",
            "year must be between 1888 and 2100."
        ),
        ("POST", "/movies", #"[]"#, 400, "malformed_json", nil, "The body must be a JSON object."),
        ("POST", "/movies", #"{"title":"#, 400, "malformed_json", nil, "The body is not valid JSON."),
        ("POST", "/movies/1/ratings", #"{"stars":"x"}"#, 422, "invalid_field", "stars", "stars must be an integer."),
        (
            "POST", "/movies/1/ratings", #"{"stars":6}"#, 422, "invalid_field", "stars",
            "stars must be an integer from 1 to 5."
        ),
    ]

    /// One application answers every row: each of them starting its own would add an SQLite
    /// file and its migrations per row to a suite that is timing-sensitive on this machine.
    @Test func anUndecodableRequestNamesItsField() async throws {
        try await withApp { client in
            for (method, uri, body, status, code, field, message) in Self.undecodable {
                try await client.execute(
                    uri: uri,
                    method: HTTPRequest.Method(rawValue: method)!,
                    headers: body == nil ? [:] : [.contentType: "application/json"],
                    body: body.map { json($0) }
                ) { (response: TestResponse) async throws in
                    response.expectError(HTTPResponse.Status(code: status), code: code, field: field)
                    let answered = (response.object["error"] as? [String: Any])?["message"] as? String
                    #expect(answered == message, "\(method) \(uri)")
                }
            }
        }
    }

    /// As before the generator: a body is read as JSON whatever its `Content-Type` says
    /// (`curl -d` sends a form type), and the answer is JSON whatever `Accept` says.
    @Test func theNegotiationHeadersChangeNothing() async throws {
        try await withApp { client in
            for contentType in ["application/x-www-form-urlencoded", "text/plain"] {
                try await client.execute(
                    uri: "/movies",
                    method: .post,
                    headers: [.contentType: contentType, .accept: "text/html"],
                    body: json(#"{"title":"Up","year":2009}"#)
                ) { (response: TestResponse) async throws in
                    #expect(response.status == .created)
                    #expect(try response.decode(Movie.self).title == "Up")
                }
                try await client.execute(uri: "/movies/1", method: .get, headers: [.accept: "text/plain"]) {
                    (response: TestResponse) async throws in
                    #expect(response.status == .ok)
                    #expect(response.headers[.contentType] == "application/json; charset=utf-8")
                }
            }
        }
    }

    /// The query parameters the handlers check, their ranges and which are required, are the
    /// ones `openapi.yaml` declares (the generated server checks types only).
    @Test func theQueryRulesCheckedByHandAreTheDocumentsOwn() throws {
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(OpenAPIDocument.json.utf8)) as? [String: Any]
        )
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        var declared: [String: [RequestInput.QueryParameter]] = [:]
        for item in paths.values {
            for case let operation as [String: Any] in item.values {
                let id = try #require(operation["operationId"] as? String)
                for case let parameter as [String: Any] in operation["parameters"] as? [Any] ?? []
                where parameter["in"] as? String == "query" {
                    let schema = try #require(parameter["schema"] as? [String: Any])
                    #expect(schema["type"] as? String == "integer")
                    let minimum = try #require((schema["minimum"] as? NSNumber)?.intValue)
                    let maximum = try #require((schema["maximum"] as? NSNumber)?.intValue)
                    declared[id, default: []]
                        .append(
                            RequestInput.QueryParameter(
                                name: try #require(parameter["name"] as? String),
                                range: minimum...maximum,
                                required: parameter["required"] as? Bool == true
                            )
                        )
                }
            }
        }
        #expect(declared == RequestInput.queryParameters)
    }
}
