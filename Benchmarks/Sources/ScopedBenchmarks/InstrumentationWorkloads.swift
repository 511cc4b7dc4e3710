#if SCOPED_INSTRUMENTATION
import InMemoryTracing
import Prometheus
import Scoped

/// The request-scope row with a backend installed: what a root's spans and metrics cost when
/// something records them (the rows without one compare against the build without them,
/// Benchmarks/instrumentation.sh).
func instrumentationWorkloads() -> [Workload] {
    let prometheus = ScopeRoot(
        instrumentation: ScopeInstrumentation(
            metricsFactory: PrometheusMetricsFactory(registry: PrometheusCollectorRegistry())
        )
    ) { $0.benchRepository = LiveBenchRepository() }
    let tracer = InMemoryTracer()
    let traced = ScopeRoot(instrumentation: ScopeInstrumentation(tracer: tracer)) {
        $0.benchRepository = LiveBenchRepository()
    }
    let scoped = ScopedController()
    return [
        Workload(
            group: "request scope",
            name: "Scoped root.withScope: the same, metrics into a Prometheus registry"
        ) { n in await requests(n, on: prometheus, reading: scoped) },
        Workload(
            group: "request scope",
            name: "Scoped root.withScope: the same, spans into InMemoryTracer"
        ) { n in
            let sum = await requests(n, on: traced, reading: scoped)
            tracer.clearAll()
            return sum
        },
    ]
}
#else
/// No rows: Scoped is built without instrumentation.
func instrumentationWorkloads() -> [Workload] { [] }
#endif
