import MovieCatalog
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import InMemoryTracing
import MetricsTestKit
import Scoped
import ScopedInstrumentation
import ScopedSQLite
import ScopedTestSupport
import ScopedTesting
import Testing
import Tracing

@testable import CatalogApp

/// The example server's metrics and traces: `GET /metrics`, Hummingbird's middlewares, and the
/// spans and metrics of the request scopes under them.
struct CatalogObservabilityTests {
    /// The sum of the samples of `name` whose labels include `labels`, in a Prometheus text body.
    ///
    /// The registry is the process's, shared by every test, so tests compare before and after.
    private func sample(_ body: String, _ name: String, _ labels: [String: String] = [:]) -> Double {
        body.split(separator: "\n")
            .reduce(0) { total, line in
                guard line.hasPrefix(name + "{") || line.hasPrefix(name + " ") else { return total }
                let (series, value) = (line.prefix { $0 != " " }, line.split(separator: " ").last ?? "")
                guard labels.allSatisfy({ series.contains("\($0.key)=\"\($0.value)\"") }) else { return total }
                return total + (Double(value) ?? 0)
            }
    }

    private func metrics(_ client: some TestClientProtocol) async throws -> String {
        try await client.execute(uri: "/metrics", method: .get) { response in
            #expect(response.status == .ok)
            #expect(response.headers[.contentType]?.hasPrefix("text/plain; version=0.0.4") == true)
            return String(buffer: response.body)
        }
    }

    @Test(.scoped { $0.movieRepository = SQLiteMovieRepository() })
    func productionServesPrometheusMetricsInWhichA404CountsAs404() async throws {
        let folder = try TemporaryFolder()
        let (app, root) = try await makeApplication(try await loadConfiguration(.production, folder: folder))
        try await app.test(.live) { client in
            let before = try await metrics(client)
            let route = ["http_route": "/movies/{id}", "http_request_method": "GET"]
            let status = { (code: String) in route.merging(["http_response_status_code": code]) { $1 } }
            for _ in 0..<3 {
                try await client.execute(uri: "/movies/999999", method: .get) { #expect($0.status == .notFound) }
            }
            let after = try await metrics(client)
            let delta = { (name: String, labels: [String: String]) in
                sample(after, name, labels) - sample(before, name, labels)
            }
            // The registry is the process's: tests running beside this one add to it, but none
            // of them makes a 500 out of a missing movie.
            #expect(delta("hb_requests", status("404")) >= 3)
            #expect(delta("hb_request_errors", route.merging(["error_type": "404"]) { $1 }) >= 3)
            #expect(sample(after, "hb_requests", status("500")) == 0)
            // The root's own metrics are in the same registry, under their documented names.
            for family in [
                "scoped_scopes_open gauge", "scoped_scopes_total counter", "scoped_service_builds_total counter",
                "scoped_service_closes_total counter", "scoped_service_build_seconds histogram",
            ] {
                #expect(after.contains("# TYPE \(family)\n"), "\(family)")
            }
            #expect(delta("scoped_scopes_total", ["outcome": "failure"]) >= 3)
            #expect(sample(after, "scoped_service_build_seconds_count", ["entry": SQLiteDatabaseKey.name]) >= 1)
        }
        await root.shutdown()
    }

    @Test func eachRequestIsAScopeCountedByOutcomeWithItsSessionBuiltAndClosed() async throws {
        let folder = try TemporaryFolder()
        let metrics = TestMetrics()
        // As at start-up, outside a test scope: validation builds a session too.
        let (app, root) = try await makeApplication(
            try await loadConfiguration(.production, folder: folder),
            instrumentation: ScopeInstrumentation(metricsFactory: metrics),
            base: productionValues()
        )
        try await app.test(.live) { client in
            for _ in 0..<3 {
                try await client.execute(uri: "/movies/999999", method: .get) { #expect($0.status == .notFound) }
            }
            try await client.execute(uri: "/movies", method: .post, body: json(#"{"title":"Heat","year":1995}"#)) {
                #expect($0.status == .created)
            }
        }
        await root.shutdown()
        let scopes = { (outcome: String) in
            metrics.counterTotal(label: "scoped_scopes_total", dimensions: [("outcome", outcome)])
        }
        // The POST's scope, and the child scope its history entry was written in after the
        // response (`handOff`); validation's scope opens on no request and is not counted.
        #expect(scopes("failure") == 3)
        #expect(scopes("success") == 2)
        #expect(try metrics.expectMeter("scoped_scopes_open").lastValue == 0)
        // One session each for validation, the three 404s, the POST and its history entry.
        let session = [("entry", SQLiteSessionKey.name), ("lifetime", "scope")]
        #expect(metrics.counterTotal(label: "scoped_service_builds_total", dimensions: session) == 6)
        #expect(metrics.counterTotal(label: "scoped_service_closes_total", dimensions: session) == 6)
        let database = [("entry", SQLiteDatabaseKey.name), ("lifetime", "app")]
        #expect(metrics.counterTotal(label: "scoped_service_builds_total", dimensions: database) == 1)
        #expect(metrics.counterTotal(label: "scoped_service_closes_total", dimensions: database) == 1)
        #expect(
            try metrics.expectTimer("scoped_service_build_seconds", [("entry", SQLiteDatabaseKey.name)]).values.count
                == 1
        )
    }

    @Test(.scoped { $0.movieRepository = SQLiteMovieRepository() })
    func aRequestsTraceHoldsItsSessionsBuildAndCloseAndA404IsNotAnError() async throws {
        let folder = try TemporaryFolder()
        let tracer = InMemoryTracer()
        let configuration = try await loadConfiguration(.development, folder: folder)
        try await withTracer(tracer) {
            let (app, root) = try await makeApplication(configuration)
            tracer.clearAll()
            try await app.test(.router) { client in
                try await client.execute(uri: "/movies", method: .post, body: json(#"{"title":"Heat","year":1995}"#)) {
                    #expect($0.status == .created)
                }
                // A tenant header means nothing to a server without tenants: not recorded.
                try await client.execute(
                    uri: "/movies/999999",
                    method: .get,
                    headers: [HTTPField.Name("X-Tenant")!: "acme"]
                ) { #expect($0.status == .notFound) }
            }
            await root.shutdown()
        }
        let spans = tracer.finishedSpans
        let requests = spans.filter { $0.kind == .server }
        try #require(requests.count == 2)
        let (created, missing) = (requests[0], requests[1])
        #expect(missing.attributes.get("http.request.header.x_tenant") == nil)
        #expect(created.attributes.get("http.response.status_code")?.toSpanAttribute() == .int64(201))
        #expect(missing.attributes.get("http.response.status_code")?.toSpanAttribute() == .int64(404))
        #expect(missing.status?.code != .error)
        #expect(missing.errors.first?.error is APIError)
        for (request, outcome) in [(created, "success"), (missing, "failure")] {
            let children = spans.filter { $0.parentSpanID == request.spanID }
            let build = children.first { $0.operationName == "scoped.build" }
            let close = children.first { $0.operationName == "scoped.close" }
            #expect(build?.attributes.get("scoped.entry")?.toSpanAttribute() == .string(SQLiteSessionKey.name))
            #expect(close?.attributes.get("scoped.entry")?.toSpanAttribute() == .string(SQLiteSessionKey.name))
            #expect(close?.attributes.get("scoped.outcome")?.toSpanAttribute() == .string(outcome))
        }
    }
}
