import MovieCatalog
import Hummingbird
import Scoped
import ScopedReload
import ScopedDiagnostics
import Synchronization

/// Routes that show what a request's scope holds, and how the application's services depend
/// on each other.
///
/// Served only when `debug.routes` is on, which production refuses at start-up.
enum DebugRoutes {
    static func add(
        to routes: RouteRecorder<BasicRequestContext>,
        root: ReloadableScopeRoot,
        reloads: ReloadLedger,
        tenancy: Bool = false
    ) {
        routes.on(.get, "/debug/scope") { _, _ in try JSONResponse.make(ScopedValues.current.describe()) }
        routes.on(.get, "/debug/echo") { _, _ in try JSONResponse.make(try await ScopeEcho.read()) }
        routes.on(.get, "/debug/stats") { _, _ in
            try JSONResponse.make(
                try await ServerStatistics.read(
                    root: root,
                    reloads: reloads.counts,
                    settings: reloads.settingsStatus,
                    tenantRegistry: reloads.tenantRegistryStatus,
                    tenancy: tenancy
                )
            )
        }
        // A request whose scope builds a service with a close that never returns: it is
        // answered, and its scope ends once the close is abandoned.
        routes.on(.get, "/debug/hanging-close") { _, _ in
            _ = try await ScopedValues.current.service(HangingCloseProbeKey.self)
            return try JSONResponse.make(["closeTimeout": "\(HangingCloseProbeKey.closeTimeout ?? .zero)"])
        }
        // The services validation built at start-up, and which read which: `?format=` json
        // (the default), svg (a picture any browser shows), dot (Graphviz: `dot -Tpng`) or mermaid.
        routes.on(.get, "/debug/graph") { request, _ in
            // The example installs the recorder on every root it makes.
            let graph = root.current.dependencyGraph() ?? DependencyGraph(services: [], edges: [])
            switch request.uri.queryParameters.get("format") ?? "json" {
            case "json":
                return try JSONResponse.make(graph)
            case "svg":
                return text(graph.svg, contentType: "image/svg+xml")
            case "dot":
                return text(graph.dot, contentType: "text/vnd.graphviz; charset=utf-8")
            case "mermaid":
                return text(graph.mermaid, contentType: "text/plain; charset=utf-8")
            default:
                throw APIError.badRequest(
                    "format must be one of: json, svg, dot, mermaid.",
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

/// A request-scoped service whose close never returns, as a close stuck on a peer that stopped
/// answering looks; read only by `/debug/hanging-close`, and not registered on the root, whose
/// validation would close it.
///
/// Its close ignores cancellation and waits for ever, so only the close timeout ends its scope.
enum HangingCloseProbeKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.scope
    static let closeTimeout: Duration? = .seconds(1)

    static func makeValue() async throws -> HangingCloseProbe { HangingCloseProbe() }

    static func close(_ value: HangingCloseProbe, outcome: ScopeOutcome) async throws {
        await withCheckedContinuation { continuation in
            HangingCloseProbe.neverResumed.withLock { $0.append(continuation) }
        }
    }
}

/// The service ``HangingCloseProbeKey`` builds.
struct HangingCloseProbe: Sendable {
    /// The continuations of closes that never return, kept so that none is leaked.
    static let neverResumed = Mutex<[CheckedContinuation<Void, Never>]>([])
}
