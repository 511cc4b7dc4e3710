import HTTPTypes
import Hummingbird
import HummingbirdTesting
import OpenAPIRuntime
import Scoped
import ScopedOpenAPI
import ScopedTestSupport
import SessionTestSupport
import Testing

// SNIPPET-BEGIN
func registerEcho(on transport: any ServerTransport, root: ScopeRoot) throws {
    let scopes = RequestScopeServerMiddleware(root: root) { values, request, _, operationID in
        // Select variants from a header, set a principal: this request's scope only.
        values.tag = request.headerFields[HTTPField.Name("X-Tag")!].map { "\(operationID):\($0)" }
    }
    try EchoAPI().registerHandlers(on: transport, middlewares: [scopes])
}
// SNIPPET-END

/// ScopedOpenAPI's article: its snippet is this file's, and it serves on every transport.
struct OpenAPIArticleTests {
    @Test(arguments: Transport.allCases)
    func theArticlesRegistrationGivesEachRequestItsScope(transport: Transport) async throws {
        let log = CloseLog()
        let root = ScopeRoot { $0.closeLog = log }
        try await transport.serve({ try registerEcho(on: $0, root: root) }) { port in
            let response = try await RawHTTPConnection(port: port)
                .exchange(
                    "GET /echo HTTP/1.1\r\nHost: test\r\nConnection: close\r\nX-Request-ID: a-1\r\nX-Tag: red\r\n\r\n"
                )
            #expect(response.hasSuffix("a-1 echo:red"))
        }
        #expect(log.all == ["success"])
    }

    @Test func theArticleShowsThisFilesSnippet() throws {
        let article = try ArticleSnippets.inArticle("Sources/ScopedOpenAPI/ScopedOpenAPI.docc/ScopedOpenAPI.md")
        #expect(article == (try ArticleSnippets.marked()))
    }
}
