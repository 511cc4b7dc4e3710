import InMemoryTracing
import Prometheus
import Scoped
import ScopedInstrumentation

/// The request-scope row with ScopedInstrumentation installed on the root: what its spans and
/// metrics cost when something records them (the row without it is the plain request scope).
func instrumentationWorkloads() -> [Workload] {
    let prometheus = ScopeRoot(
        observers: [
            ScopeInstrumentation(metricsFactory: PrometheusMetricsFactory(registry: PrometheusCollectorRegistry()))
        ]
    ) { $0.benchRepository = LiveBenchRepository() }
    let tracer = InMemoryTracer()
    let traced = ScopeRoot(observers: [ScopeInstrumentation(tracer: tracer)]) {
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
