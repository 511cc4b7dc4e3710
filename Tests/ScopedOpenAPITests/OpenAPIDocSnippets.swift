import OpenAPIRuntime
import OpenAPIVapor
import Scoped
import ScopedOpenAPI
import SessionTestSupport
import Testing
import Vapor
import VaporTesting

// The snippet of ScopedOpenAPI's doc comment, verbatim between the markers, on the generated
// handlers of Generated/openapi.yaml.

/// The doc's generated handlers: the tests' own.
typealias CatalogHandler = EchoAPI

struct OpenAPIDocSnippets {
    @Test func generatedHandlersRunInRequestScopesOnVaporsTransport() async throws {
        let log = CloseLog()
        let root = ScopeRoot { $0.closeLog = log }
        let app = try await Application.make(.testing)
        app.logger.logLevel = .critical
        do {
            // SNIPPET-BEGIN
            let transport = VaporTransport(routesBuilder: app)  // or Hummingbird's router, or any transport
            try CatalogHandler()
                .registerHandlers(
                    on: transport,
                    middlewares: [RequestScopeServerMiddleware(root: root)]
                )
            // SNIPPET-END
            try await app.testing(method: .running(port: 0))
                .test(.GET, "echo", headers: ["X-Request-ID": "doc.1"]) {
                    #expect($0.status == .ok)
                    #expect($0.body.string == "doc.1 -")
                }
        } catch {
            try? await app.asyncShutdown()
            throw error
        }
        try await app.asyncShutdown()
        #expect(log.all == ["success"])
        await root.shutdown()
    }
}
