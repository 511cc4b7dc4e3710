import Logging
import NIOCore
import Scoped
import ScopedReload
import ScopedServiceLifecycle
import ScopedVapor
import ServiceLifecycle
import SessionTestSupport
import Testing
public import Vapor
import VaporTesting

// The snippets of ScopedVapor's doc comments, verbatim between the markers, with the catalog
// stand-ins of SessionTestSupport.

extension Movie: Content {}

/// A service that follows configuration changes with the root's service: the doc's stand-in.
struct ConfigurationFollower: Service {
    let rootService: ScopeRootService
    func run() async throws { try await gracefulShutdown() }
}

/// Compiled for ScopeRootLifecycle's doc comments, not run: `execute` serves until a signal
/// (ScopeRootLifecycleTests runs the lifecycle itself).
func servingWithTheRootsLifecycle(app: Application, root: ScopeRoot) async throws {
    // SNIPPET-BEGIN
    app.lifecycle.use(ScopeRootLifecycle(root: root, logger: app.logger))
    app.middleware.use(RequestScopeMiddleware(root: root))
    try await app.execute()
    try await app.asyncShutdown()
    // SNIPPET-END
}

func followingConfiguration(app: Application, reloadable: ReloadableScopeRoot) {
    // SNIPPET-BEGIN
    let rootService = ScopeRootService(root: reloadable, logger: app.logger)
    let follower = ConfigurationFollower(rootService: rootService)  // calls rootService.follow(…)
    app.lifecycle.use(ScopeRootLifecycle(service: rootService, logger: app.logger, services: [follower]))
    // SNIPPET-END
}

/// The catalog's application: the doc comments' routes, on `root`.
func makeCatalogApp(root: ScopeRoot) async throws -> Application {
    // SNIPPET-BEGIN
    let app = try await Application.make(.production)
    app.middleware.use(RequestScopeMiddleware(root: root))
    app.get("movies", ":id") { request async throws -> Movie in
        // Reads the request's scope: its request ID, its session, its overrides.
        let id = try request.parameters.require("id", as: Int.self)
        guard let movie = try await ScopedValues.current.movieRepository.movie(id: id) else { throw Abort(.notFound) }
        return movie
    }
    // SNIPPET-END
    // SNIPPET-BEGIN
    app.get("export") { request async throws -> Response in
        Response(
            body: .init(scopedAsyncStream: { writer in
                for movie in try await ScopedValues.current.movieRepository.all() {
                    try await writer.write(.buffer(ByteBuffer(string: movie.title + "\n")))
                }
                try await writer.write(.end)
            })
        )
    }
    // SNIPPET-END
    return app
}

struct VaporDocSnippets {
    @Test func aRouteAndAStreamReadTheRequestsScope() async throws {
        let root = ScopeRoot { _ in }
        let app = try await makeCatalogApp(root: root)
        do {
            try await app.testing(method: .running(port: 0))
                .test(.GET, "movies/2") { response in
                    #expect((try? response.content.decode(Movie.self)) == Movie(id: 2, title: "Alien"))
                }
                .test(.GET, "movies/9") { #expect($0.status == .notFound) }
                .test(.GET, "export") { #expect($0.body.string == "Heat\nAlien\n") }
        } catch {
            try await app.asyncShutdown()
            throw error
        }
        try await app.asyncShutdown()
        #expect(root.openScopeCount == 0)
        await root.shutdown()
    }
}
