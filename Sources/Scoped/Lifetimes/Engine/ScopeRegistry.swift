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
    /// Set on a test root: told when a test reads a live-only entry it did not override.
    let observer: DefaultReadObserver?
    /// Whether this is a test's own root, made by `withTestScope`; roots made inside a test
    /// share its observer but are not test roots.
    let isTestRoot: Bool
    /// What the root reports its scopes and services to; empty when nothing is installed, so
    /// that reporting costs an emptiness check.
    let observers: RootObservers

    init(
        services: [Service] = [],
        requirements: [Requirement] = [],
        onCloseError: @escaping @Sendable (ScopeCloseError) -> Void = ScopeRegistry.logCloseError,
        closeTimeout: Duration? = nil,
        observer: DefaultReadObserver? = nil,
        isTestRoot: Bool = false,
        observers: RootObservers = RootObservers()
    ) {
        self.isTestRoot = isTestRoot
        self.services = services
        self.requirements = requirements
        self.onCloseError = onCloseError
        self.closeTimeout = closeTimeout
        self.observer = observer
        self.observers = observers
    }

    /// Logs a close failure at `error` level with the label `Scoped`, where the process's
    /// other logs go (standard error until `LoggingSystem.bootstrap` says otherwise): the
    /// default when no handler is given.
    static let logCloseError: @Sendable (ScopeCloseError) -> Void = { error in
        Logger(label: "Scoped").error("\(error)", metadata: ["scope.outcome": "\(error.outcome)"])
    }
}
