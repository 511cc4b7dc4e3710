import Hummingbird
import HummingbirdTesting
import Logging
import Scoped
import ScopedHummingbird
import ScopedServiceLifecycle
import SessionTestSupport
import Testing

// The snippets of ScopedHummingbird's doc comments, verbatim between the markers, with the
// catalog stand-ins of SessionTestSupport.

/// Compiled for `addScopeRoot`'s doc comment, not run: `runService` serves until a signal
/// (ScopeRootServiceTests runs the service itself).
func servingWithTheRootsLifecycle(router: Router<BasicRequestContext>, root: ScopeRoot, logger: Logger) async throws {
    // SNIPPET-BEGIN
    var app = Application(router: router)
    app.addScopeRoot(ScopeRootService(root: root, logger: logger))
    try await app.runService()
    // SNIPPET-END
}

struct HummingbirdDocSnippets {
    @Test func theRequestIDMiddlewareGoesBeforeTheRequestScope() async throws {
        let root = ScopeRoot { _ in }
        let router = Router()
        // SNIPPET-BEGIN
        router.add(middleware: RequestIDMiddleware())
        router.add(middleware: RequestScopeMiddleware(root: root))
        // SNIPPET-END
        router.get("/id") { _, _ in ScopedValues.current.requestID ?? "none" }
        try await Application(router: router)
            .test(.router) { client in
                try await client.execute(uri: "/id", method: .get) { response in
                    #expect(response.status == .ok)
                    #expect(String(buffer: response.body) != "none")
                }
            }
        await root.shutdown()
    }

    @Test func aRouteReadsItsRequestsScope() async throws {
        let root = ScopeRoot { _ in }
        // SNIPPET-BEGIN
        let router = Router()
        router.add(middleware: RequestIDMiddleware())
        router.add(middleware: RequestScopeMiddleware(root: root))
        router.get("/movies/:id") { request, context -> String in
            // Reads the request's scope: its request ID, its session, its overrides.
            let id = try context.parameters.require("id", as: Int.self)
            guard let movie = try await ScopedValues.current.movieRepository.movie(id: id) else {
                throw HTTPError(.notFound)
            }
            return movie.title
        }
        // SNIPPET-END
        try await Application(router: router)
            .test(.router) { client in
                try await client.execute(uri: "/movies/2", method: .get) { #expect(String(buffer: $0.body) == "Alien") }
                try await client.execute(uri: "/movies/9", method: .get) { #expect($0.status == .notFound) }
            }
        await root.shutdown()
    }
}
