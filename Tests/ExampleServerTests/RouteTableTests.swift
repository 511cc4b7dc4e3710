import Hummingbird
import MovieCatalog
import Testing

/// The methods a path is served with, for the 405's `Allow` header.
struct RouteTableTests {
    private func table() -> RouteTable {
        let table = RouteTable()
        for (method, path) in [
            (HTTPRequest.Method.get, "/movies"), (.post, "/movies"), (.get, "/movies/export"),
            (.get, "/movies/:id"), (.put, "/movies/:id"), (.delete, "/movies/:id"), (.get, "/movies/:id/changes"),
        ] {
            table.add(method, path)
        }
        return table
    }

    @Test func aConstantSegmentIsServedByItsOwnRouteOnlyAsTheRouterDoes() {
        #expect(table().allowedMethods(for: "/movies/export") == [.get])
    }

    @Test func aParameterSegmentMatchesAnyOtherValue() {
        #expect(table().allowedMethods(for: "/movies/7") == [.get, .put, .delete])
        #expect(table().allowedMethods(for: "/movies/7/changes") == [.get])
        #expect(table().allowedMethods(for: "/movies") == [.get, .post])
    }

    @Test func anUnknownPathHasNoMethods() {
        #expect(table().allowedMethods(for: "/shows/7").isEmpty)
        #expect(table().allowedMethods(for: "/movies/7/ratings/1").isEmpty)
    }
}
