package import Hummingbird
import Synchronization

/// The routes the server serves, recorded as they are added to the router, so that a known
/// path asked with a method it does not serve answers 405 with `Allow`, and the OpenAPI
/// document can be checked against what is really served.
package final class RouteTable: Sendable {
    /// One served route: a method and a path pattern whose `:name` segments match any value.
    package struct Route: Sendable, Hashable {
        package var method: HTTPRequest.Method
        package var path: String
    }

    private let recorded = Mutex<[Route]>([])

    /// Creates an empty table.
    package init() {}

    /// Every route recorded, in the order they were added.
    package var routes: [Route] { recorded.withLock { $0 } }

    /// Records a route.
    package func add(_ method: HTTPRequest.Method, _ path: String) {
        recorded.withLock { $0.append(Route(method: method, path: path)) }
    }

    /// The methods served for `path`, in the order their routes were added; empty for a path
    /// no route matches.
    ///
    /// Only the most specific patterns that match count, as the router's trie prefers a
    /// constant segment to a parameter: `/movies/export` is served by its own route, never by
    /// `/movies/:id`.
    package func allowedMethods(for path: String) -> [HTTPRequest.Method] {
        let segments = Self.segments(of: path)
        let matching = routes.compactMap { route -> (route: Route, constants: [Bool])? in
            let pattern = Self.segments(of: route.path)
            guard Self.matches(pattern, segments) else { return nil }
            return (route, pattern.map { !$0.hasPrefix(":") })
        }
        guard let best = matching.map(\.constants).max(by: { $0.lexicographicallyPrecedes($1) { !$0 && $1 } })
        else { return [] }
        var methods: [HTTPRequest.Method] = []
        for (route, constants) in matching where constants == best && !methods.contains(route.method) {
            methods.append(route.method)
        }
        return methods
    }

    private static func segments(of path: String) -> [Substring] {
        path.split(separator: "/", omittingEmptySubsequences: true)
    }

    private static func matches(_ pattern: [Substring], _ segments: [Substring]) -> Bool {
        pattern.count == segments.count
            && zip(pattern, segments).allSatisfy { pattern, segment in pattern.hasPrefix(":") || pattern == segment }
    }
}

/// Adds routes to a router and records each in a ``RouteTable``.
package struct RouteRecorder<Context: RequestContext> {
    package let router: Router<Context>
    package let table: RouteTable

    /// Records the routes added to `router` in `table`.
    package init(router: Router<Context>, table: RouteTable) {
        self.router = router
        self.table = table
    }

    /// Serves `method` on `path` with `handler`, and records it.
    package func on(
        _ method: HTTPRequest.Method,
        _ path: String,
        use handler: @escaping @Sendable (Request, Context) async throws -> Response
    ) {
        router.on(RouterPath(stringLiteral: path), method: method, use: handler)
        table.add(method, path)
    }
}
