import CoreMetrics
import Instrumentation
import Logging
import OTel
import ServiceLifecycle

/// The server's spans and metrics sent to an OpenTelemetry collector with swift-otel, over
/// OTLP/HTTP, when the `otel` section names one (``OTLPSettings``).
///
/// Every span the server makes goes to the collector: each request's, from Hummingbird's
/// `TracingMiddleware` (named after its route, with the request's `X-Request-ID` recorded), and,
/// nested in it, the root's `scoped.build` and `scoped.close` spans for the services the request
/// built and closed. Metrics go both to the collector and to the Prometheus registry that
/// `GET /metrics` serves. Log lines stay on standard error.
enum OTLPExport {
    /// How long one export waits for the collector, unless `OTEL_EXPORTER_OTLP_TIMEOUT` says.
    static let exportTimeout = Duration.seconds(3)

    /// Bootstraps the process's tracer, and swift-metrics with Prometheus and the exporter side
    /// by side when `metrics` is true, and returns the services that send what they record.
    ///
    /// Run before the server builds its first root: a root reports to the backends bootstrapped
    /// when it is created. Run the services before the application in the service group, which
    /// stops its services in reverse order: they stop after the server, and send what its last
    /// requests recorded before the process exits.
    ///
    /// - Parameters:
    ///   - settings: the collector and the encoding.
    ///   - metrics: whether metrics are collected (`metrics.enabled`).
    ///   - logger: where swift-otel reports an export that failed.
    /// - Returns: the exporters' services.
    /// - Throws: what swift-otel throws for a configuration it cannot use, such as an invalid
    ///   `OTEL_*` variable.
    static func bootstrap(_ settings: OTLPSettings, metrics: Bool, logger: Logger) throws -> [any Service] {
        var configuration = OTel.Configuration.default
        configuration.serviceName = settings.serviceName
        // Its warnings (an export that failed) in the server's log; `OTEL_LOG_LEVEL` shows more.
        configuration.diagnosticLogger = .custom(logger)
        configuration.diagnosticLogLevel = .warning
        configuration.logs.enabled = false
        let encoding: OTel.Configuration.OTLPExporterConfiguration.`Protocol` =
            switch settings.encoding {
            case .protobuf: .httpProtobuf
            case .json: .httpJSON
            }
        configuration.traces.otlpExporter.protocol = encoding
        configuration.traces.otlpExporter.endpoint = settings.url(of: "v1/traces")
        configuration.metrics.otlpExporter.protocol = encoding
        configuration.metrics.otlpExporter.endpoint = settings.url(of: "v1/metrics")
        configuration.metrics.enabled = metrics
        // Each export waits at most this long for the collector (OpenTelemetry's default is 10 s;
        // `OTEL_EXPORTER_OTLP_TIMEOUT` sets another): at shutdown the last export of metrics and
        // then of spans run inside `shutdown.timeout`, after the server's drain, so a collector
        // that is down or frozen costs the shutdown at most twice this, and the export's failure
        // is logged.
        configuration.traces.otlpExporter.timeout = exportTimeout
        configuration.metrics.otlpExporter.timeout = exportTimeout
        let tracing = try OTel.makeTracingBackend(configuration: configuration)
        InstrumentationSystem.bootstrap(tracing.factory)
        guard metrics else { return [tracing.service] }
        let metricsBackend = try OTel.makeMetricsBackend(configuration: configuration)
        PrometheusBackend.bootstrap(alongside: metricsBackend.factory)
        return [tracing.service, metricsBackend.service]
    }
}
