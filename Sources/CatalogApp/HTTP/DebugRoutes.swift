import MovieCatalog
import Hummingbird
import Scoped

/// Routes that show what a request's scope holds, and how the application's services depend
/// on each other.
///
/// Served only when `debug.routes` is on, which production refuses at start-up.
enum DebugRoutes {
    static func add(to routes: RouteRecorder<BasicRequestContext>, root: ScopeRoot) {
        routes.on(.get, "/debug/scope") { _, _ in try JSONResponse.make(ScopedValues.current.describe()) }
        routes.on(.get, "/debug/echo") { _, _ in try JSONResponse.make(try await ScopeEcho.read()) }
        routes.on(.get, "/debug/stats") { _, _ in try JSONResponse.make(try await ServerStatistics.read(root: root)) }
        // The services validation built at start-up, and which read which: `?format=` json
        // (the default), dot (Graphviz: `dot -Tpng`) or mermaid.
        routes.on(.get, "/debug/graph") { request, _ in
            let graph = root.dependencyGraph()
            switch request.uri.queryParameters.get("format") ?? "json" {
            case "json":
                return try JSONResponse.make(graph)
            case "dot":
                return text(graph.dot, contentType: "text/vnd.graphviz; charset=utf-8")
            case "mermaid":
                return text(graph.mermaid, contentType: "text/plain; charset=utf-8")
            default:
                throw APIError.badRequest(
                    "format must be one of: json, dot, mermaid.",
                    field: "format",
                    code: "invalid_query"
                )
            }
        }
    }

    private static func text(_ text: String, contentType: String) -> Response {
        Response(
            status: .ok,
            headers: [.contentType: contentType],
            body: .init(byteBuffer: ByteBuffer(string: text))
        )
    }
}
