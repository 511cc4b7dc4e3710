import Foundation
import Hummingbird
import HummingbirdTesting
import ScopedSQLite
import ScopedTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `ExampleServer` with `OTEL_EXPORTER_OTLP_ENDPOINT` naming a collector on loopback, as an
/// operator runs it: its requests' spans, the spans of the services they built and closed, and
/// its metrics reach the collector over OTLP/HTTP (protobuf, the default), and a collector that
/// freezes costs neither a request nor the shutdown.
@Suite(.timeLimit(.minutes(3)))
struct OTLPExportTests {
    /// GET `path` on the server, with `requestID` as its `X-Request-ID` when given.
    private func get(_ path: String, port: Int, requestID: String? = nil) async throws -> (Int, String?) {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        if let requestID { request.setValue(requestID, forHTTPHeaderField: "X-Request-ID") }
        let (_, response) = try await URLSession.shared.data(for: request)
        let http = try #require(response as? HTTPURLResponse)
        return (http.statusCode, http.value(forHTTPHeaderField: "X-Request-ID"))
    }

    @Test func eachRequestsSpanWithItsIDRouteAndServicesAndTheMetricsReachTheCollector() async throws {
        let collector = OTLPCollector()
        let folder = try TemporaryFolder()
        try await collector.application()
            .test(.live) { client in
                let server = try ExampleServerProcess(environment: [
                    "APP_ENV": "development",
                    "DATABASE_PATH": folder.path("catalog.sqlite"),
                    "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:\(try #require(client.port))",
                ])
                let port = try await server.port()
                let (named, _) = try await get("/movies/1", port: port, requestID: "otlp-test-1")
                let (generated, generatedID) = try await get("/movies/1", port: port)
                #expect(named == 200 && generated == 200)
                // Prometheus keeps its own copy of every metric.
                var metrics = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/metrics")!)
                metrics.httpMethod = "GET"
                let (text, _) = try await URLSession.shared.data(for: metrics)
                #expect(String(decoding: text, as: UTF8.self).contains("scoped_scopes_total"))
                // The last requests' spans and metrics are sent as the server stops.
                #expect(try await server.stop(within: .seconds(60)) == 0)

                let spans = collector.spans
                for id in ["otlp-test-1", try #require(generatedID)] {
                    let request = try #require(
                        spans.first { $0.attributes["http.request.header.x_request_id"] == .string(id) },
                        "no span for the request \(id) among \(spans.map(\.name))"
                    )
                    #expect(request.name == "/movies/{id}")
                    #expect(request.attributes["http.route"] == .string("/movies/{id}"))
                    #expect(request.attributes["http.response.status_code"] == .int(200))
                    #expect(request.serviceName == "movie-catalog")
                    let children = spans.filter { $0.parentSpanID == request.spanID && $0.traceID == request.traceID }
                    let build = children.first { $0.name == "scoped.build" }
                    let close = children.first { $0.name == "scoped.close" }
                    #expect(build?.attributes["scoped.entry"] == .string(SQLiteSessionKey.name))
                    #expect(close?.attributes["scoped.entry"] == .string(SQLiteSessionKey.name))
                    #expect(close?.attributes["scoped.outcome"] == .string("success"))
                }
                let names = collector.metricNames
                for name in ["scoped_scopes_total", "scoped_service_builds_total", "http.server.request.duration"] {
                    #expect(names.contains(name), "\(name) not among \(names.sorted())")
                }
            }
    }

    @Test func aCollectorThatFreezesCostsNoRequestAndNoCleanShutdown() async throws {
        let collector = OTLPCollector(answers: false)
        let folder = try TemporaryFolder()
        try await collector.application()
            .test(.live) { client in
                defer { collector.release() }
                let server = try ExampleServerProcess(environment: [
                    "APP_ENV": "development",
                    "DATABASE_PATH": folder.path("catalog.sqlite"),
                    "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:\(try #require(client.port))",
                    // A batch of spans goes out 50 ms after a request, rather than 5 s.
                    "OTEL_BSP_SCHEDULE_DELAY": "50",
                ])
                let port = try await server.port()
                #expect(try await get("/movies/1", port: port).0 == 200)
                // An export is held by the collector: requests are still answered.
                #expect(await eventually(within: .seconds(30)) { collector.exports > 0 })
                #expect(try await get("/movies/2", port: port).0 == 200)
                // The last exports wait for the frozen collector at most their timeout each, inside
                // `shutdown.timeout` (10 s): the server stops cleanly and says what was not sent.
                #expect(try await server.stop(within: .seconds(60)) == 0)
                #expect(server.log.contains("Failed to export"))
                #expect(server.log.contains("Stopped"))
            }
    }
}
