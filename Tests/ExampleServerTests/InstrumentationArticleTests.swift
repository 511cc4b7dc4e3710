import Instrumentation
import Logging
import Metrics
import OTel
import Prometheus
import Scoped
import ScopedInstrumentation
import ServiceLifecycle
import ScopedSQLite
import ScopedTestSupport
import Testing
import Tracing

// The snippets of ScopedInstrumentation's landing article (and of `ScopeInstrumentation`'s doc
// comment), verbatim between the markers. They compile here; the first is not run, since a
// process bootstraps its metrics and tracing backends once, and `CatalogObservabilityTests`
// covers what they report.

struct InstrumentationArticleTests {
    /// Compiled, not run: it bootstraps the process's backends.
    private func bootstrap(registry: PrometheusCollectorRegistry, tracer: any Tracer) -> ScopeRoot {
        // SNIPPET-BEGIN
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        InstrumentationSystem.bootstrap(tracer)  // swift-otel, or any other Tracer
        let root = ScopeRoot(services: [SQLiteDatabaseKey.self], observers: [ScopeInstrumentation.bootstrapped])
        // SNIPPET-END
        return root
    }

    private func ownBackends(tracer: any Tracer, metrics: any MetricsFactory) -> ScopeRoot {
        // SNIPPET-BEGIN
        let root = ScopeRoot(observers: [ScopeInstrumentation(tracer: tracer, metricsFactory: metrics)])
        // SNIPPET-END
        return root
    }

    /// Compiled, not run: it bootstraps the process's backends.
    private func exportToACollector(registry: PrometheusCollectorRegistry, server: some Service) async throws {
        let logger = Logger(label: "server")
        // SNIPPET-BEGIN
        var otel = OTel.Configuration.default  // the OTEL_* variables apply over it
        otel.serviceName = "movie-catalog"
        otel.logs.enabled = false
        let tracing = try OTel.makeTracingBackend(configuration: otel)
        let metrics = try OTel.makeMetricsBackend(configuration: otel)
        InstrumentationSystem.bootstrap(tracing.factory)
        let prometheus = PrometheusMetricsFactory(registry: registry)
        MetricsSystem.bootstrap(MultiplexMetricsHandler(factories: [prometheus, metrics.factory]))
        // Started first, stopped last: what the last requests recorded is sent.
        try await ServiceGroup(services: [tracing.service, metrics.service, server], logger: logger).run()
        // SNIPPET-END
    }

    @Test func aRootReportsToTheRegistryItWasGiven() async throws {
        let registry = PrometheusCollectorRegistry()
        let root = ownBackends(tracer: NoOpTracer(), metrics: PrometheusMetricsFactory(registry: registry))
        try await root.withScope {}
        var text: [UInt8] = []
        registry.emit(into: &text)
        #expect(String(decoding: text, as: UTF8.self).contains("scoped_"))
        await root.shutdown()
    }

    @Test func everySnippetOfTheArticleIsHere() throws {
        let article = try ArticleSnippets.inArticle(
            "Sources/ScopedInstrumentation/ScopedInstrumentation.docc/ScopedInstrumentation.md"
        )
        #expect(article == (try ArticleSnippets.marked()))
    }
}
