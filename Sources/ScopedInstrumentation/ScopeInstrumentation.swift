public import CoreMetrics
public import Scoped
public import Tracing

/// Spans and metrics for a root's scopes and services: a `ScopeObserver` to install on
/// the root.
///
/// ```swift
/// MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
/// InstrumentationSystem.bootstrap(tracer)  // swift-otel, or any other Tracer
/// let root = ScopeRoot(services: [SQLiteDatabaseKey.self], observers: [ScopeInstrumentation.bootstrapped])
/// ```
///
/// ``bootstrapped`` takes the tracer and the metrics factory the process bootstrapped
/// (`InstrumentationSystem` and `MetricsSystem`) when it is read: bootstrap them before. A root
/// without it, or with it and nothing bootstrapped, reports nothing and runs none of this
/// module's code.
///
/// What is reported:
/// - a span `scoped.build` around each service construction and `scoped.close` around each
///   close, with the attributes `scoped.entry`, `scoped.lifetime` and, on a close,
///   `scoped.outcome`; a failed build or close records its error on the span. They nest under
///   the span current where the service is built or closed (a request's span). Reads make no
///   span.
/// - the metrics `scoped_scopes_open` (meter), `scoped_scopes_total` (counter; dimension
///   `outcome`), `scoped_service_builds_total` and `scoped_service_closes_total` (counters;
///   dimensions `entry` and `lifetime`), `scoped_service_close_failures_total` (counter;
///   dimension `entry`) and `scoped_service_build_seconds` (timer; dimension `entry`);
///   `scoped_tenants_open` (gauge) and `scoped_tenant_evictions_total` (counter), with no tenant
///   label; and, for a `ReloadableScopeRoot`, `scoped_reloads_total` (counter;
///   dimension `outcome`: `applied` or `rejected`) and `scoped_root_generation` (gauge).
///
/// The metrics of the services registered on the root are made with the root, so that a build
/// or a close of one records without a lock.
public struct ScopeInstrumentation: ScopeObserver {
    /// The tracer spans go to, or `nil` for none.
    let tracer: (any Tracer)?
    /// The factory metrics are created with, or `nil` for none.
    let metricsFactory: (any MetricsFactory)?

    /// Reports spans to `tracer` and metrics to `metricsFactory`; `nil` (or the no-op tracer or
    /// factory) turns either off.
    ///
    /// - Parameters:
    ///   - tracer: receives a span per service build and close.
    ///   - metricsFactory: creates the scope and service metrics.
    public init(tracer: (any Tracer)? = nil, metricsFactory: (any MetricsFactory)? = nil) {
        self.tracer = tracer is NoOpTracer ? nil : tracer
        self.metricsFactory = metricsFactory is NOOPMetricsHandler ? nil : metricsFactory
    }

    /// The tracer and the metrics factory the process has bootstrapped now, each off when it
    /// is the no-op default.
    public static var bootstrapped: ScopeInstrumentation {
        ScopeInstrumentation(tracer: InstrumentationSystem.tracer, metricsFactory: MetricsSystem.factory)
    }

    /// The recorder of one root, with the metrics of its registered services made now; `nil`,
    /// so that the root observes nothing, when there is neither a tracer nor a factory.
    public func forRoot(registering services: [any ScopedServiceKey.Type]) -> (any ScopeObserver)? {
        guard tracer != nil || metricsFactory != nil else { return nil }
        return Instruments(tracer: tracer, metricsFactory: metricsFactory, services: services)
    }
}
