import Logging

/// What an application root knows about its services and requirements; shared by
/// every scope opened on it.
final class ScopeRegistry: Sendable {
    /// A service registered for validation and diagnostics.
    struct Service: Sendable {
        let key: any ScopedServiceKey.Type
        let id: ObjectIdentifier
        let name: String
        let lifetime: ScopedLifetime
        let valueType: String
        let resolve: @Sendable (ScopedValues) async throws -> Void

        init<K: ScopedServiceKey>(_ key: K.Type) {
            self.key = key
            id = ObjectIdentifier(key)
            name = K.name
            lifetime = K.lifetime
            valueType = String(reflecting: K.Value.self)
            resolve = { values in _ = try await values.service(key) }
        }
    }

    /// A type-keyed object every scope must have.
    struct Requirement: Sendable {
        let name: String
        let isSatisfied: @Sendable (ScopedValues) -> Bool

        init<T: Sendable>(_ type: T.Type) {
            name = String(reflecting: type)
            isSatisfied = { $0.object(type) != nil }
        }
    }

    let services: [Service]
    let requirements: [Requirement]
    let onCloseError: @Sendable (ScopeCloseError) -> Void
    /// How long a service's close may run before it is abandoned, for keys that do not say;
    /// `nil` waits for every close.
    let closeTimeout: Duration?
    /// Answers the reads of entries no scope set, when an observer takes them; the nodes of the
    /// root's scopes carry it, so that a read with none pays one `nil` check.
    let observer: DefaultReadObserver?
    /// Whether this is a test's own root (``ScopeRoot/testRoot(observers:)``).
    let isTestRoot: Bool
    /// Whether this root is a test's, or was created in a test's scope (an application the
    /// test builds): ``ScopedValues/isTestScope``.
    let isInTest: Bool
    /// What the root reports its scopes and services to; empty when nothing is installed, so
    /// that reporting costs an emptiness check.
    let observers: RootObservers

    init(
        services: [Service] = [],
        requirements: [Requirement] = [],
        onCloseError: @escaping @Sendable (ScopeCloseError) -> Void = ScopeRegistry.logCloseError,
        closeTimeout: Duration? = nil,
        isTestRoot: Bool = false,
        isInTest: Bool = false,
        observers: RootObservers = RootObservers()
    ) {
        self.isTestRoot = isTestRoot
        self.isInTest = isTestRoot || isInTest
        self.services = services
        self.requirements = requirements
        self.onCloseError = onCloseError
        self.closeTimeout = closeTimeout
        self.observer = observers.observeDefaultReads ? DefaultReadObserver(readers: observers.defaultReads) : nil
        self.observers = observers
    }

    /// Logs a close failure at `error` level with the label `Scoped`, where the process's
    /// other logs go (standard error until `LoggingSystem.bootstrap` says otherwise): the
    /// default when no handler is given.
    static let logCloseError: @Sendable (ScopeCloseError) -> Void = { error in
        Logger(label: "Scoped").error("\(error)", metadata: ["scope.outcome": "\(error.outcome)"])
    }
}

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
    /// The observers asked for the value of an entry no scope set.
    let defaultReads: [any ScopeObserver]
    /// The observers installed (before ``ScopeObserver/forRoot(registering:)``) that the roots
    /// created in this root's scopes report to as well: those that take
    /// ``ScopeObserverEvents/nestedRoots``, this root's own and those it was given so.
    let forNestedRoots: [any ScopeObserver]

    /// The observers `installed`, and those `inherited` from the root whose scope this one
    /// starts from, asked to report to for a root with `services` registered (none for those
    /// that have nothing to observe), and among them the first that opens tenants.
    ///
    /// The provider is not one of the observers: the root keeps it, apart from its registry, so
    /// that the tenants it holds (whose owners refer to the registry) make no cycle with it.
    static func forRoot(
        _ installed: [any ScopeObserver],
        inheriting inherited: [any ScopeObserver] = [],
        registering services: [any ScopedServiceKey.Type]
    ) -> (observers: RootObservers, tenantProvider: (any TenantProvider)?) {
        let installed = installed + inherited
        var observers = installed.compactMap { $0.forRoot(registering: services) }
        let provider = observers.firstIndex { $0 is any TenantProvider }.map { observers.remove(at: $0) }
        let forNestedRoots = installed.filter { $0.events.contains(.nestedRoots) }
        return (RootObservers(observers, forNestedRoots: forNestedRoots), provider as? any TenantProvider)
    }

    /// Observers already asked for their observer of the root.
    init(_ all: [any ScopeObserver] = [], forNestedRoots: [any ScopeObserver] = []) {
        self.all = all
        scopes = all.filter { $0.events.contains(.scopes) }
        services = all.filter { $0.events.contains(.services) }
        reads = all.filter { $0.events.contains(.reads) }
        appReads = all.filter { $0.events.contains(.appReads) }
        defaultReads = all.filter { $0.events.contains(.defaultReads) }
        self.forNestedRoots = forNestedRoots
    }

    /// Whether an observer takes scopes opened and ended.
    var observeScopes: Bool { !scopes.isEmpty }

    /// Whether an observer takes builds and closes.
    var observeServices: Bool { !services.isEmpty }

    /// Whether an observer takes reads made while a scope or tenant service is built.
    var observeReads: Bool { !reads.isEmpty }

    /// Whether an observer takes what app services read while they are built.
    var observeAppReads: Bool { !appReads.isEmpty }

    /// Whether an observer answers the reads of entries no scope set.
    var observeDefaultReads: Bool { !defaultReads.isEmpty }

    func scopeOpened(_ values: ScopedValues, handedOffAt site: HandedOffWork.Site?) {
        for observer in scopes { observer.scopeOpened(values, handedOffAt: site) }
    }

    func scopeEnded(_ values: ScopedValues, outcome: ScopeOutcome) {
        for observer in scopes { observer.scopeEnded(values, outcome: outcome) }
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
