import Foundation
import NIOCore
import Scoped
import ScopedVapor
import SessionTestSupport
import Testing
import Vapor
import VaporTesting

extension ScopedValues {
    /// What a test request's `X-Tag` header set in its scope.
    @Entry var tag: String? = nil
}

/// A Vapor application serving on a free loopback port, with every request in a scope of `root`.
///
/// Vapor's testing library starts and stops the server for each request it sends; tests that
/// send many requests at once, or hold a connection open, start it once here instead.
func withServingApp<R: Sendable>(
    root: ScopeRoot,
    routes: (Application) throws -> Void,
    _ body: (Application, Int) async throws -> R
) async throws -> R {
    try await withTestingApp { app in
        app.http.client.configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 64
        // A thousand requests queue for 64 connections: in the full parallel suite on 2 cores the
        // last waited more than the default 10 s for one. The tests are about scopes, not speed.
        app.http.client.configuration.timeout.connect = .seconds(60)
        app.middleware.use(
            RequestScopeMiddleware(root: root) { values, request in
                values.tag = request.headers.first(name: "X-Tag")
                values.failsToCommit = request.headers.first(name: "X-Fail-Commit") != nil
            }
        )
        try routes(app)
        try await app.server.start(address: .hostname("127.0.0.1", port: 0))
        let port = try #require(app.http.server.shared.localAddress?.port)
        do {
            let result = try await body(app, port)
            await app.server.shutdown()
            return result
        } catch {
            await app.server.shutdown()
            throw error
        }
    }
}

/// Runs `body` with a new application in Vapor's `.testing` environment, logging only critical
/// lines, then shuts it down (Vapor's `withApp`, for closures that are not `Sendable`).
func withTestingApp<R: Sendable>(_ body: (Application) async throws -> R) async throws -> R {
    let app = try await Application.make(.testing)
    app.logger.logLevel = .critical
    do {
        let result = try await body(app)
        try await app.asyncShutdown()
        return result
    } catch {
        try? await app.asyncShutdown()
        throw error
    }
}

/// What the echo routes answer: the request's scope as the handler read it.
struct ScopeEcho: Content {
    var requestID: String?
    var tag: String?
    var names: [String]?
}
