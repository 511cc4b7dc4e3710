import CoreMetrics
import Prometheus
import Synchronization

/// The process's swift-metrics backend: a Prometheus registry, bootstrapped once, that
/// `GET /metrics` renders in the Prometheus text format.
///
/// swift-metrics allows one bootstrap per process, and a root takes its metrics factory when it
/// is created, so ``bootstrap()`` runs before the server builds its root; every root and every
/// server of the process (tests build many) then report into the one registry. With
/// `metrics.enabled` off it never runs: nothing is collected and `GET /metrics` is empty.
enum PrometheusBackend {
    /// The registry every metric of the process is in once ``bootstrap()`` has run.
    static let registry = PrometheusCollectorRegistry()

    /// Every metric of the process in the Prometheus text format (version 0.0.4); nothing
    /// before ``bootstrap()``.
    static func exposition() -> [UInt8] {
        registry.emitToBuffer()
    }

    /// Bootstraps swift-metrics with the Prometheus registry, and with `exporter` beside it when
    /// given, so that every metric goes to both; once per process, and a later call changes
    /// nothing.
    ///
    /// The server passes its OTLP exporter's factory (``OTLPExport``) before it builds its first
    /// root, so its first call is the one that counts.
    static func bootstrap(alongside exporter: (any MetricsFactory)? = nil) {
        let first = isBootstrapped.withLock { done in
            defer { done = true }
            return !done
        }
        guard first else { return }
        var factory = PrometheusMetricsFactory(registry: registry)
        // Hummingbird names its metrics and their labels OpenTelemetry-style
        // (`http.server.request.duration`); Prometheus names allow no dots.
        factory.nameAndLabelSanitizer = { name, labels in
            (prometheusName(name), labels.map { (prometheusName($0.0), $0.1) })
        }
        // Services build in micro- to milliseconds: finer buckets than the default 5 ms to 10 s.
        factory.durationHistogramBuckets["scoped_service_build_seconds"] = [
            .microseconds(100), .microseconds(500), .milliseconds(1), .milliseconds(5), .milliseconds(25),
            .milliseconds(100), .milliseconds(500), .seconds(1), .seconds(5),
        ]
        MetricsSystem.bootstrap(exporter.map { MultiplexMetricsHandler(factories: [factory, $0]) } ?? factory)
    }

    private static let isBootstrapped = Mutex(false)

    /// `name` with every character Prometheus does not allow in a name replaced by `_`.
    static func prometheusName(_ name: String) -> String {
        String(
            name.map { character in
                character.isASCII && (character.isLetter || character.isNumber || character == "_" || character == ":")
                    ? character : "_"
            }
        )
    }
}
