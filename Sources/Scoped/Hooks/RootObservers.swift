/// The observers of one root, each asked for its observer of that root.
///
/// Kept in lists by the events they take: each event is told in order, builds and closes
/// nested, the first observer outermost. An event no observer takes costs one emptiness check.
struct RootObservers: Sendable {
    private let all: [any ScopeObserver]
    private let scopes: [any ScopeObserver]
    private let services: [any ScopeObserver]
    private let reads: [any ScopeObserver]
    private let appReads: [any ScopeObserver]

    /// The observers `installed` ask to report to for a root with `services` registered (none
    /// for those that have nothing to observe), and among them the first that opens tenants.
    ///
    /// The provider is not one of the observers: the root keeps it, apart from its registry, so
    /// that the tenants it holds (whose owners refer to the registry) make no cycle with it.
    static func forRoot(
        _ installed: [any ScopeObserver],
        registering services: [any ScopedServiceKey.Type]
    ) -> (observers: RootObservers, tenantProvider: (any TenantProvider)?) {
        var observers = installed.compactMap { $0.forRoot(registering: services) }
        let provider = observers.firstIndex { $0 is any TenantProvider }.map { observers.remove(at: $0) }
        return (RootObservers(observers), provider as? any TenantProvider)
    }

    /// Observers already asked for their observer of the root.
    init(_ all: [any ScopeObserver] = []) {
        self.all = all
        scopes = all.filter { $0.events.contains(.scopes) }
        services = all.filter { $0.events.contains(.services) }
        reads = all.filter { $0.events.contains(.reads) }
        appReads = all.filter { $0.events.contains(.appReads) }
    }

    /// Whether an observer takes scopes opened and ended.
    var observeScopes: Bool { !scopes.isEmpty }

    /// Whether an observer takes builds and closes.
    var observeServices: Bool { !services.isEmpty }

    /// Whether an observer takes reads made while a scope or tenant service is built.
    var observeReads: Bool { !reads.isEmpty }

    /// Whether an observer takes what app services read while they are built.
    var observeAppReads: Bool { !appReads.isEmpty }

    func scopeOpened() {
        for observer in scopes { observer.scopeOpened() }
    }

    func scopeEnded(_ outcome: ScopeOutcome) {
        for observer in scopes { observer.scopeEnded(outcome) }
    }

    /// Tells the observers that take them of the read of `service` by the construction of
    /// `reader`, an app service when `byAppService`.
    func serviceRead(
        _ service: any ScopedServiceKey.Type,
        by reader: any ScopedServiceKey.Type,
        byAppService: Bool,
        refusal: ScopedError?
    ) {
        for observer in byAppService ? appReads : reads {
            observer.serviceRead(service, by: reader, refusal: refusal)
        }
    }

    func appServiceBuilt(_ service: any ScopedServiceKey.Type, in duration: Duration?, reading inputs: [ScopeInput]) {
        for observer in appReads { observer.appServiceBuilt(service, in: duration, reading: inputs) }
    }

    /// The observers of type `O`.
    func all<O>(_ type: O.Type) -> [O] {
        all.compactMap { $0 as? O }
    }

    /// Runs `operation`, the construction of `service`, inside every observer's `build`.
    nonisolated(nonsending) func build<Value>(
        _ service: any ScopedServiceKey.Type,
        from index: Int = 0,
        _ operation: () async throws -> Value
    ) async throws -> Value {
        guard index < services.count else { return try await operation() }
        return try await services[index]
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
        guard index < services.count else { return try await operation() }
        try await services[index]
            .close(service, outcome: outcome) {
                try await close(service, outcome: outcome, from: index + 1, operation)
            }
    }
}
