import MovieCatalog
import Hummingbird
import Testing

@testable import CatalogApp

struct RequestLogMiddlewareTests {
    @Test(arguments: [
        ("/movies", nil, "/movies"),
        ("/movies", "", "/movies"),
        ("/movies", "api_key=s3cr3t", "/movies?api_key=…"),
        ("/movies", "limit=5&token=abc%20def&flag", "/movies?limit=…&token=…&flag=…"),
        ("/movies/1", "a=b=c", "/movies/1?a=…"),
    ])
    func queryValuesAreRedactedAndNamesKept(path: String, query: String?, logged: String) {
        #expect(RequestLogMiddleware<BasicRequestContext>.redacted(path: path, query: query) == logged)
    }
}
