/// The observers of one root, each asked for its observer of that root: told every event in
/// order, with builds and closes nested, the first observer outermost.
struct RootObservers: Sendable {
    private let observers: [any ScopeObserver]

    /// The observers `installed` ask to report to for a root with `services` registered (none
    /// for those that have nothing to observe).
    init(_ installed: [any ScopeObserver], services: [any ScopedServiceKey.Type]) {
        observers = installed.compactMap { $0.forRoot(registering: services) }
    }

    /// Whether there is none: then no event needs reporting.
    var isEmpty: Bool { observers.isEmpty }

    func scopeOpened() {
        for observer in observers { observer.scopeOpened() }
    }

    func scopeEnded(_ outcome: ScopeOutcome) {
        for observer in observers { observer.scopeEnded(outcome) }
    }

    func tenantsChanged(open: Int, evicted: Bool) {
        for observer in observers { observer.tenantsChanged(open: open, evicted: evicted) }
    }

    func rootReloaded(generation: Int, applied: Bool) {
        for observer in observers { observer.rootReloaded(generation: generation, applied: applied) }
    }

    /// Runs `operation`, the construction of `service`, inside every observer's `build`.
    nonisolated(nonsending) func build<Value>(
        _ service: any ScopedServiceKey.Type,
        from index: Int = 0,
        _ operation: () async throws -> Value
    ) async throws -> Value {
        guard index < observers.count else { return try await operation() }
        return try await observers[index]
            .build(service) {
                try await build(service, from: index + 1, operation)
            }
    }

    /// Runs `operation`, the close of `service` told `outcome`, inside every observer's `close`.
    nonisolated(nonsending) func close(
        _ service: any ScopedServiceKey.Type,
        outcome: ScopeOutcome,
        from index: Int = 0,
        _ operation: () async throws -> Void
    ) async throws {
        guard index < observers.count else { return try await operation() }
        try await observers[index]
            .close(service, outcome: outcome) {
                try await close(service, outcome: outcome, from: index + 1, operation)
            }
    }
}
