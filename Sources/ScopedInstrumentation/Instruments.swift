import CoreMetrics
import Dispatch
import Scoped
import ScopedReload
import ScopedTenants
import Synchronization
import Tracing

/// The spans and metrics of one root's scopes and services, created once per root (and per
/// entry), so that a build or a close only records.
///
/// The metrics of the services registered on the root are created with it and never change, so
/// a build or a close finds them without a lock. A service read without being registered gets
/// its metrics on first use, made outside the lock that caches them: no lock of ours is held
/// while the user's `MetricsFactory` runs.
final class Instruments: ReloadObserver, TenantObserver {
    /// Scopes, builds and closes; not reads.
    var events: ScopeObserverEvents { [.scopes, .services] }

    /// The metrics of one service entry.
    private struct EntryMetrics: Sendable {
        let builds: Counter
        let buildSeconds: Timer
        let closes: Counter
        let closeFailures: Counter

        init(name: String, lifetime: ScopedLifetime, factory: any MetricsFactory) {
            let entry = ("entry", name)
            builds = Counter(
                label: "scoped_service_builds_total",
                dimensions: [entry, ("lifetime", lifetime.rawValue)],
                factory: factory
            )
            buildSeconds = Timer(label: "scoped_service_build_seconds", dimensions: [entry], factory: factory)
            closes = Counter(
                label: "scoped_service_closes_total",
                dimensions: [entry, ("lifetime", lifetime.rawValue)],
                factory: factory
            )
            closeFailures = Counter(
                label: "scoped_service_close_failures_total",
                dimensions: [entry],
                factory: factory
            )
        }
    }

    /// The metrics of the scopes opened on the root.
    private struct ScopeMetrics: Sendable {
        let open: Meter
        let succeeded: Counter
        let failed: Counter
        let cancelled: Counter

        init(factory: any MetricsFactory) {
            open = Meter(label: "scoped_scopes_open", factory: factory)
            let outcome = { (name: String) in
                Counter(label: "scoped_scopes_total", dimensions: [("outcome", name)], factory: factory)
            }
            succeeded = outcome("success")
            failed = outcome("failure")
            cancelled = outcome("cancelled")
        }
    }

    private let tracer: (any Tracer)?
    private let metricsFactory: (any MetricsFactory)?
    private let scopeMetrics: ScopeMetrics?
    /// The metrics of the registered services, made with the root: read without a lock.
    private let registeredMetrics: [ObjectIdentifier: EntryMetrics]
    /// The metrics of services read without being registered, made on first use.
    private let unregisteredMetrics = Mutex<[ObjectIdentifier: EntryMetrics]>([:])

    init(tracer: (any Tracer)?, metricsFactory: (any MetricsFactory)?, services: [any ScopedServiceKey.Type]) {
        self.tracer = tracer
        self.metricsFactory = metricsFactory
        self.scopeMetrics = metricsFactory.map(ScopeMetrics.init)
        var registered: [ObjectIdentifier: EntryMetrics] = [:]
        if let metricsFactory {
            for service in services {
                registered[ObjectIdentifier(service)] = EntryMetrics(
                    name: service.name,
                    lifetime: service.lifetime,
                    factory: metricsFactory
                )
            }
        }
        self.registeredMetrics = registered
    }

    /// Counts a reload of a `ReloadableScopeRoot` (`scoped_reloads_total{outcome}`) and, when
    /// it was applied, sets the generation now current (`scoped_root_generation`).
    func rootReloaded(generation: Int, applied: Bool) {
        guard let metricsFactory else { return }
        Counter(
            label: "scoped_reloads_total",
            dimensions: [("outcome", applied ? "applied" : "rejected")],
            factory: metricsFactory
        )
        .increment()
        Gauge(label: "scoped_root_generation", factory: metricsFactory).record(generation)
    }

    /// Sets how many tenants the root has open, and counts an eviction when one made the change.
    ///
    /// `scoped_tenants_open` and `scoped_tenant_evictions_total`, with no tenant label: a
    /// million tenants must not make a million series.
    func tenantsChanged(open: Int, evicted: Bool) {
        guard let metricsFactory else { return }
        Gauge(label: "scoped_tenants_open", factory: metricsFactory).record(open)
        if evicted { Counter(label: "scoped_tenant_evictions_total", factory: metricsFactory).increment() }
    }

    /// Counts a scope opened on the root.
    func scopeOpened(_ values: ScopedValues, handedOffAt site: HandedOffWork.Site?) {
        scopeMetrics?.open.increment()
    }

    /// Counts a scope on the root as ended with `outcome`.
    func scopeEnded(_ values: ScopedValues, outcome: ScopeOutcome) {
        guard let scopeMetrics else { return }
        scopeMetrics.open.decrement()
        switch outcome {
        case .success: scopeMetrics.succeeded.increment()
        case .failure: scopeMetrics.failed.increment()
        case .cancelled: scopeMetrics.cancelled.increment()
        }
    }

    /// Runs `build`, the construction of the service `key`, in a `scoped.build` span, and
    /// counts and times it.
    nonisolated(nonsending) func build<Value>(
        _ key: any ScopedServiceKey.Type,
        _ build: () async throws -> Value
    ) async throws -> Value {
        // Nanoseconds in a word, not a `ContinuousClock.Instant`: an async function keeps a
        // local of a resilient type in the task's allocator.
        let start = metricsFactory == nil ? nil : DispatchTime.now().uptimeNanoseconds
        let value = try await inSpan("scoped.build", key, outcome: nil, build)
        if let start, let metrics = metrics(for: key) {
            metrics.builds.increment()
            metrics.buildSeconds.recordNanoseconds(Int64(DispatchTime.now().uptimeNanoseconds &- start))
        }
        return value
    }

    /// Runs `close`, the close of the service `key` told `outcome`, in a `scoped.close` span,
    /// and counts it, and its failure.
    nonisolated(nonsending) func close(
        _ key: any ScopedServiceKey.Type,
        outcome: ScopeOutcome,
        _ close: () async throws -> Void
    ) async throws {
        let metrics = metrics(for: key)
        do {
            try await inSpan("scoped.close", key, outcome: outcome, close)
            metrics?.closes.increment()
        } catch {
            metrics?.closes.increment()
            metrics?.closeFailures.increment()
            throw error
        }
    }

    nonisolated(nonsending) private func inSpan<Value>(
        _ name: String,
        _ key: any ScopedServiceKey.Type,
        outcome: ScopeOutcome?,
        _ operation: () async throws -> Value
    ) async throws -> Value {
        guard let tracer else { return try await operation() }
        let span = tracer.startSpan(name, context: ServiceContext.current ?? .topLevel, ofKind: .internal)
        defer { span.end() }
        span.attributes["scoped.entry"] = key.name
        span.attributes["scoped.lifetime"] = key.lifetime.rawValue
        if let outcome { span.attributes["scoped.outcome"] = outcome.name }
        do {
            // Services built while this one builds (its dependencies) nest under its span.
            return try await ServiceContext.$current.withValue(span.context) { try await operation() }
        } catch {
            span.recordError(error)
            span.setStatus(SpanStatus(code: .error))
            throw error
        }
    }

    /// The metrics of the entry `key`: the registered ones, or else made on its first build or
    /// close (outside the lock; a concurrent first use keeps the first stored).
    private func metrics(for key: any ScopedServiceKey.Type) -> EntryMetrics? {
        guard let metricsFactory else { return nil }
        let id = ObjectIdentifier(key)
        if let metrics = registeredMetrics[id] ?? unregisteredMetrics.withLock({ $0[id] }) { return metrics }
        let made = EntryMetrics(name: key.name, lifetime: key.lifetime, factory: metricsFactory)
        return unregisteredMetrics.withLock { cache in
            if let stored = cache[id] { return stored }
            cache[id] = made
            return made
        }
    }
}
