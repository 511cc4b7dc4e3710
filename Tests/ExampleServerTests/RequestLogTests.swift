import MovieCatalog
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Scoped
import ScopedTestSupport
import ScopedTesting
import Testing

@testable import CatalogApp

/// The request log, as an operator reads it: one line per request with its real status and one
/// request ID, the one the client got back.
@Suite(.scoped { $0.movieRepository = SQLiteMovieRepository() })
struct RequestLogTests {
    /// Sends `requests` through the development server, logging at trace into a capture, and
    /// returns each response's status and request ID with the captured lines.
    private func run(
        _ requests: [(method: HTTPRequest.Method, uri: String, headers: HTTPFields, body: String?)],
        profile: AppConfiguration.Profile = .development
    ) async throws -> (
        responses: [(status: HTTPResponse.Status, id: String?, allow: String?)], lines: [LogCapture.Line]
    ) {
        let folder = try TemporaryFolder()
        let capture = LogCapture()
        let (app, root) = try await makeApplication(
            try await loadConfiguration(
                profile,
                folder: folder,
                environment: ["TENANTS_DIRECTORY": folder.path("tenants")]
            ),
            logger: capture.logger(label: "test")
        )
        let responses = try await app.test(.router) { client in
            var responses: [(status: HTTPResponse.Status, id: String?, allow: String?)] = []
            for request in requests {
                let response = try await client.execute(
                    uri: request.uri,
                    method: request.method,
                    headers: request.headers,
                    body: request.body.map { json($0) }
                ) { ($0.status, $0.headers[.requestID], $0.headers[.allow]) }
                responses.append(response)
            }
            return responses
        }
        await root.shutdown()
        return (responses, capture.lines)
    }

    /// The request log line (`METHOD target -> status in …`) for the request with `id`.
    private func requestLine(_ lines: [LogCapture.Line], id: String?) -> LogCapture.Line? {
        lines.first { $0.message.contains(" -> ") && $0.metadata["hb.request.id"]?.description == id }
    }

    @Test func withTenantsEachRequestsLineNamesItsTenant() async throws {
        let (responses, lines) = try await run(
            [
                (.get, "/movies", [TenantHeader.name: "acme"], nil),
                (.post, "/movies", [TenantHeader.name: "beta"], #"{"title":"Up","year":2009}"#),
                (.get, "/movies", [TenantHeader.name: "Not Valid"], nil),
            ],
            profile: .multitenant
        )
        #expect(responses.map(\.status) == [.ok, .created, .badRequest])
        #expect(requestLine(lines, id: responses[0].id)?.metadata["tenant"]?.description == "acme")
        #expect(requestLine(lines, id: responses[1].id)?.metadata["tenant"]?.description == "beta")
        // An invalid ID is refused before it is trusted: its line names no tenant.
        #expect(requestLine(lines, id: responses[2].id)?.metadata["tenant"] == nil)
        #expect(requestLine(lines, id: responses[2].id) != nil)
    }

    @Test(arguments: [
        (HTTPRequest.Method.get, "/movies/999999", nil as String?, 404),
        (.get, "/movies/abc", nil, 400),
        (.post, "/movies", #"{"title":"","year":1995}"#, 422),
        (.get, "/no/such/path", nil, 404),
        (.get, "/movies/1", nil, 200),
    ])
    func eachRequestIsLoggedOnceWithItsRealStatus(method: HTTPRequest.Method, uri: String, body: String?, status: Int)
        async throws
    {
        let (responses, lines) = try await run([(method, uri, [:], body)])
        let response = try #require(responses.first)
        #expect(response.status.code == status)
        let line = try #require(requestLine(lines, id: response.id), "\(lines)")
        #expect(line.message.hasSuffix("\(status) in \(line.message.split(separator: " in ").last ?? "")"))
        #expect(line.message.contains("-> \(status) "))
        #expect(lines.filter { $0.message.contains(" -> ") }.count == 1)
    }

    @Test func aRequestRefusedWhileItsScopeOpensIsLoggedWithItsStatus() async throws {
        let (responses, lines) = try await run([(.get, "/movies", [.catalog: "no-such-variant"], nil)])
        let response = try #require(responses.first)
        #expect(response.status == .badRequest)
        let line = try #require(requestLine(lines, id: response.id), "\(lines)")
        #expect(line.message.contains("-> 400 "))
    }

    @Test func everyLineOfARequestCarriesOneRequestIDTheOneTheClientSees() async throws {
        let (responses, lines) = try await run([
            (.get, "/movies/1", [.requestID: "client-chosen-id"], nil),
            (.get, "/movies/1", [:], nil),
        ])
        #expect(responses.map(\.id).first == "client-chosen-id")
        let ids = responses.compactMap(\.id)
        #expect(Set(ids).count == 2)
        let requestLines = lines.filter { $0.message.contains(" -> ") }
        #expect(requestLines.compactMap { $0.metadata["hb.request.id"]?.description } == ids)
        for line in lines {
            #expect(line.metadata.keys.filter { $0.lowercased().contains("request") }.count <= 1, "\(line)")
        }
    }

    @Test(arguments: [
        (HTTPRequest.Method.trace, "/health", "GET"),
        (.delete, "/movies", "GET, POST"),
        (.patch, "/movies/1", "GET, PUT, DELETE"),
        (.get, "/movies/1/ratings", "POST"),
    ])
    func aKnownPathWithAMethodItDoesNotServeIs405WithAllow(method: HTTPRequest.Method, uri: String, allow: String)
        async throws
    {
        let (responses, lines) = try await run([(method, uri, [:], nil)])
        let response = try #require(responses.first)
        #expect(response.status == .methodNotAllowed)
        #expect(response.allow == allow)
        #expect(requestLine(lines, id: response.id)?.message.contains("-> 405 ") == true)
    }
}
