import Hummingbird
import Scoped

/// Routes that show what a request's scope holds. Served only when `debug.routes` is on, which
/// production refuses at start-up.
enum DebugRoutes {
    static func add(to router: Router<BasicRequestContext>, root: ScopeRoot) {
        router.get("/debug/scope") { _, _ in try JSONResponse.make(ScopedValues.current.describe()) }
        router.get("/debug/echo") { _, _ in try JSONResponse.make(try await ScopeEcho.read()) }
        router.get("/debug/stats") { _, _ in try JSONResponse.make(try await ServerStatistics.read(root: root)) }
    }
}
