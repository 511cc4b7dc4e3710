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

/// Every line of the HTTP contract, against the in-memory fixture swapped in by the trait.
@Suite(.scoped { $0.movieRepository = InMemoryMovieRepository.fixture() })
struct CatalogRouterTests {
    private func withApp(_ test: @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        let folder = try TemporaryFolder()
        let (app, root) = try await makeApplication(try await loadConfiguration(.test, folder: folder))
        try await app.test(.router, test)
        await root.shutdown()
    }

    @Test func healthIsOKWithAGeneratedRequestID() async throws {
        try await withApp { client in
            try await client.execute(uri: "/health", method: .get) { (response: TestResponse) async throws in
                #expect(response.status == .ok)
                // The checks the configured parts contributed: here, the SQLite database only.
                let report = try response.decode(HealthReport.self)
                #expect(report.status == "ok")
                #expect(report.checks.map(\.name) == ["database"])
                #expect(report.checks.first?.detail.hasSuffix("connections leased") == true)
                // Hummingbird's own ID: hexadecimal, its random half not zero-padded.
                let id = try #require(response.headers[.requestID])
                #expect((17...32).contains(id.count))
                #expect(id.allSatisfy { $0.isHexDigit })
            }
        }
    }

    @Test(arguments: [
        ("abc-123_X.y", true), (String(repeating: "a", count: 64), true), ("bad id!", false),
        (String(repeating: "a", count: 65), false),
    ])
    func validIncomingRequestIDIsEchoedOthersAreReplaced(id: String, valid: Bool) async throws {
        try await withApp { client in
            try await client.execute(uri: "/movies/99", method: .get, headers: [.requestID: id]) {
                (response: TestResponse) async throws in
                #expect((response.headers[.requestID] == id) == valid)
                response.expectError(.notFound, code: "not_found", field: nil)
            }
        }
    }

    @Test func listIsOrderedByIDWithTheTotal() async throws {
        try await withApp { client in
            try await client.execute(uri: "/movies", method: .get) { (response: TestResponse) async throws in
                let page = try response.decode(MoviePage.self)
                #expect(page.total == 3)
                #expect(page.items.map(\.id) == [1, 2, 3])
                #expect(page.items[1] == Movie(id: 2, title: "A Bug's Life", year: 1998, director: "John Lasseter"))
            }
            try await client.execute(uri: "/movies?limit=1&offset=1", method: .get) {
                (response: TestResponse) async throws in
                let page = try response.decode(MoviePage.self)
                #expect(page.items.map(\.id) == [2])
                #expect(page.total == 3)
            }
        }
    }

    @Test(arguments: [
        ("limit=0", "limit"), ("limit=501", "limit"), ("limit=abc", "limit"), ("offset=-1", "offset"),
        ("offset=x", "offset"),
    ])
    func invalidPagingIsABadRequestNamingTheField(query: String, field: String) async throws {
        try await withApp { client in
            try await client.execute(uri: "/movies?\(query)", method: .get) { (response: TestResponse) async throws in
                response.expectError(.badRequest, field: field)
            }
        }
    }

    @Test func movieIsReturnedWithANullDirectorKey() async throws {
        try await withApp { client in
            try await client.execute(uri: "/movies/1", method: .get) { (response: TestResponse) async throws in
                #expect(response.status == .ok)
                #expect(
                    try response.decode(Movie.self)
                        == Movie(id: 1, title: "Toy Story", year: 1995, director: "John Lasseter")
                )
            }
            try await client.execute(uri: "/movies", method: .post, body: json(#"{"title":"Up","year":2009}"#)) {
                (response: TestResponse) async throws in
                #expect(response.object.keys.contains("director"))
                #expect(response.object["director"] is NSNull)
            }
        }
    }

    @Test(arguments: ["abc", "0", "-1", "99999999999999999999999"])
    func nonPositiveOrNonNumericIDIsABadRequest(id: String) async throws {
        try await withApp { client in
            for method in [HTTPRequest.Method.get, .delete] {
                try await client.execute(uri: "/movies/\(id)", method: method) {
                    (response: TestResponse) async throws in
                    response.expectError(.badRequest, code: "invalid_id", field: "id")
                }
            }
        }
    }

    @Test func createReturns201WithLocationAndTheMovie() async throws {
        try await withApp { client in
            try await client.execute(
                uri: "/movies",
                method: .post,
                body: json(#"{"title":"Up","year":2009,"director":"Pete Docter"}"#)
            ) { (response: TestResponse) async throws in
                #expect(response.status == .created)
                #expect(response.headers[.location] == "/movies/4")
                #expect(
                    try response.decode(Movie.self) == Movie(id: 4, title: "Up", year: 2009, director: "Pete Docter")
                )
            }
            try await client.execute(uri: "/movies/4", method: .get) { (response: TestResponse) async throws in
                #expect(try response.decode(Movie.self).title == "Up")
            }
        }
    }

    @Test(arguments: [
        (#"{"title":"","year":2009}"#, "title"),
        (#"{"title":"\#(String(repeating: "x", count: 201))","year":2009}"#, "title"),
        (#"{"title":"Up","year":1887}"#, "year"),
        (#"{"title":"Up","year":2101}"#, "year"),
        (#"{"title":"Up"}"#, "year"),
        (#"{"year":2009}"#, "title"),
        (#"{"title":5,"year":2009}"#, "title"),
        (#"{"title":"Up","year":"2009"}"#, "year"),
        (#"{"title":"Up","year":1e300}"#, "year"),
        (#"{"title":"Up","year":2009,"director":""}"#, "director"),
        // U+0000, which PostgreSQL cannot store: refused on every backend alike.
        (#"{"title":"Up\u0000","year":2009}"#, "title"),
        (#"{"title":"Up","year":2009,"director":"Pete\u0000Docter"}"#, "director"),
    ])
    func invalidMovieIsUnprocessableNamingTheField(body: String, field: String) async throws {
        try await withApp { client in
            for (uri, method) in [("/movies", HTTPRequest.Method.post), ("/movies/1", .put)] {
                try await client.execute(uri: uri, method: method, body: json(body)) {
                    (response: TestResponse) async throws in
                    response.expectError(.unprocessableContent, code: "invalid_field", field: field)
                }
            }
            try await client.execute(uri: "/movies", method: .get) { (response: TestResponse) async throws in
                #expect(
                    try response.decode(MoviePage.self).items.map(\.title) == [
                        "Toy Story", "A Bug's Life", "Toy Story 2",
                    ]
                )
            }
        }
    }

    @Test(arguments: ["{bad", "", "[1,2]", "\"text\""])
    func malformedJSONIsABadRequest(body: String) async throws {
        try await withApp { client in
            try await client.execute(uri: "/movies", method: .post, body: json(body)) {
                (response: TestResponse) async throws in
                response.expectError(.badRequest, code: "malformed_json", field: nil)
            }
        }
    }

    @Test func bodyOverOneMebibyteIsRefusedAs413() async throws {
        try await withApp { client in
            let title = String(repeating: "x", count: (1 << 20) + 1)
            try await client.execute(uri: "/movies", method: .post, body: json(#"{"title":"\#(title)","year":2009}"#)) {
                (response: TestResponse) async throws in
                response.expectError(.contentTooLarge, code: "payload_too_large", field: nil)
            }
        }
    }

    @Test func replaceReturnsTheMovieAnd404WhenAbsent() async throws {
        try await withApp { client in
            try await client.execute(
                uri: "/movies/2",
                method: .put,
                body: json(#"{"title":"A Bug's Life","year":1998,"director":null}"#)
            ) { (response: TestResponse) async throws in
                #expect(response.status == .ok)
                #expect(
                    try response.decode(Movie.self) == Movie(id: 2, title: "A Bug's Life", year: 1998, director: nil)
                )
            }
            try await client.execute(uri: "/movies/42", method: .put, body: json(#"{"title":"X","year":2000}"#)) {
                (response: TestResponse) async throws in
                response.expectError(.notFound, code: "not_found", field: nil)
            }
        }
    }

    @Test func deleteReturns204Then404() async throws {
        try await withApp { client in
            try await client.execute(uri: "/movies/3", method: .delete) { (response: TestResponse) async throws in
                #expect(response.status == .noContent)
                #expect(response.body.readableBytes == 0)
            }
            try await client.execute(uri: "/movies/3", method: .delete) { (response: TestResponse) async throws in
                response.expectError(.notFound, code: "not_found", field: nil)
            }
            try await client.execute(uri: "/movies/3", method: .get) { (response: TestResponse) async throws in
                response.expectError(.notFound, code: "not_found", field: nil)
            }
        }
    }

    @Test func ratingsAverageAndCount() async throws {
        try await withApp { client in
            try await client.execute(uri: "/movies/1/rating", method: .get) { (response: TestResponse) async throws in
                #expect(response.status == .ok)
                #expect(response.object["average"] is NSNull)
                #expect(try response.decode(Rating.self) == Rating(movieID: 1, average: nil, count: 0))
            }
            try await client.execute(uri: "/movies/1/ratings", method: .post, body: json(#"{"stars":5}"#)) {
                (response: TestResponse) async throws in
                #expect(response.status == .created)
                #expect(try response.decode(Rating.self) == Rating(movieID: 1, average: 5, count: 1))
            }
            try await client.execute(uri: "/movies/1/ratings", method: .post, body: json(#"{"stars":2}"#)) {
                (response: TestResponse) async throws in
                #expect(try response.decode(Rating.self) == Rating(movieID: 1, average: 3.5, count: 2))
            }
            try await client.execute(uri: "/movies/1/rating", method: .get) { (response: TestResponse) async throws in
                #expect(try response.decode(Rating.self) == Rating(movieID: 1, average: 3.5, count: 2))
            }
        }
    }

    @Test(arguments: [#"{"stars":0}"#, #"{"stars":6}"#, #"{"stars":"5"}"#, "{}"])
    func invalidRatingIsUnprocessable(body: String) async throws {
        try await withApp { client in
            try await client.execute(uri: "/movies/1/ratings", method: .post, body: json(body)) {
                (response: TestResponse) async throws in
                response.expectError(.unprocessableContent, code: "invalid_field", field: "stars")
            }
        }
    }

    @Test func ratingsOfAMissingMovieAre404() async throws {
        try await withApp { client in
            try await client.execute(uri: "/movies/9/ratings", method: .post, body: json(#"{"stars":3}"#)) {
                (response: TestResponse) async throws in
                response.expectError(.notFound, code: "not_found", field: nil)
            }
            try await client.execute(uri: "/movies/9/rating", method: .get) { (response: TestResponse) async throws in
                response.expectError(.notFound, code: "not_found", field: nil)
            }
        }
    }

    @Test func unknownRouteIsAJSON404() async throws {
        try await withApp { client in
            try await client.execute(uri: "/nowhere", method: .get) { (response: TestResponse) async throws in
                response.expectError(.notFound, field: nil)
            }
        }
    }
}
