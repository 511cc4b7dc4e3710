import MovieCatalog
import Hummingbird
import Scoped

/// Routes that show what a request's scope holds.
///
/// Served only when `debug.routes` is on, which production refuses at start-up.
enum DebugRoutes {
    static func add(to routes: RouteRecorder<BasicRequestContext>, root: ScopeRoot) {
        routes.on(.get, "/debug/scope") { _, _ in try JSONResponse.make(ScopedValues.current.describe()) }
        routes.on(.get, "/debug/echo") { _, _ in try JSONResponse.make(try await ScopeEcho.read()) }
        routes.on(.get, "/debug/stats") { _, _ in try JSONResponse.make(try await ServerStatistics.read(root: root)) }
    }
}
