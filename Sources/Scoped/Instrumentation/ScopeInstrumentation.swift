#if Instrumentation
public import CoreMetrics
public import Tracing
#endif

/// Where a root reports the spans and metrics of its scopes and services.
///
/// A root takes its instrumentation when it is created; by default, ``bootstrapped``: the
/// tracer and the metrics factory the process bootstrapped (`InstrumentationSystem` and
/// `MetricsSystem`), so bootstrap them before creating the root. Where neither is bootstrapped,
/// instrumentation is off and costs a `nil` check per scope and per service.
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
///   dimension `entry`) and `scoped_service_build_seconds` (timer; dimension `entry`).
///
/// Building the package with its `Instrumentation` trait disabled compiles all of it out.
public struct ScopeInstrumentation: Sendable {
    #if Instrumentation
    /// The tracer spans go to, or `nil` for none.
    let tracer: (any Tracer)?
    /// The factory metrics are created with, or `nil` for none.
    let metricsFactory: (any MetricsFactory)?

    /// Reports spans to `tracer` and metrics to `metricsFactory`; `nil` turns either off.
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

    /// No spans and no metrics.
    public static var disabled: ScopeInstrumentation { ScopeInstrumentation() }

    /// The recorder a root uses, or `nil` when this reports nothing.
    func makeInstruments(for services: [ScopeRegistry.Service]) -> Instruments? {
        guard tracer != nil || metricsFactory != nil else { return nil }
        return Instruments(tracer: tracer, metricsFactory: metricsFactory, services: services)
    }
    #else
    /// What the process has bootstrapped: nothing, since instrumentation is compiled out.
    public static var bootstrapped: ScopeInstrumentation { ScopeInstrumentation() }

    /// No spans and no metrics.
    public static var disabled: ScopeInstrumentation { ScopeInstrumentation() }
    #endif
}
