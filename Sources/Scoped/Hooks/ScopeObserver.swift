/// Told what a root's scopes and services do: the one way a feature outside the kernel plugs
/// into a root.
///
/// A root is created with the observers it reports to (`ScopeRoot(observers:)`), and asks each
/// for the observer of that root with ``forRoot(registering:)``. Then it tells them, in the
/// order given, when a scope opens and ends, and runs each service's construction and close
/// inside theirs, the first observer outermost. A root created with none does nothing of this:
/// no call, no lock, one emptiness check per scope and per service.
///
/// Every requirement has a default that does nothing, so an observer writes only what it needs.
/// ScopedInstrumentation's `ScopeInstrumentation` (spans and metrics) is one:
///
/// ```swift
/// struct BuildLog: ScopeObserver {
///     let log: @Sendable (String) -> Void
///
///     func build<Value>(
///         _ service: any ScopedServiceKey.Type,
///         _ operation: () async throws -> Value
///     ) async throws -> Value {
///         log("building \(service.name)")
///         return try await operation()
///     }
/// }
///
/// let root = ScopeRoot(observers: [BuildLog { print($0) }])
/// ```
///
/// The calls are made on the task that opens, ends, builds or closes, inside the request's own
/// work: an observer must be quick and must not block. `build` and `close` run their operation
/// exactly once and return or throw what it did (an observer may wrap the operation in a span
/// or a task-local binding, and must not run it on another task).
public protocol ScopeObserver: Sendable {
    /// The observer that a root created with this one reports to, given the services
    /// registered on the root: by default, this observer itself; `nil` when there is nothing to
    /// observe (instrumentation with nowhere to report), so that the root runs as one with no
    /// observer.
    ///
    /// Called once per root, when it is created (a reload creates a new root, and calls it
    /// again): the place to prepare what each service's events need, so that they need no lock.
    func forRoot(registering services: [any ScopedServiceKey.Type]) -> (any ScopeObserver)?

    /// A scope opened on the root (a request's, a job's, a tenant's request).
    func scopeOpened()

    /// A scope opened on the root ended with `outcome`, after its services closed.
    func scopeEnded(_ outcome: ScopeOutcome)

    /// Runs `operation`, the construction of the service `service`, once, and returns what it
    /// returns or throws what it throws.
    ///
    /// The services the construction reads are built inside `operation`, so their `build` runs
    /// nested inside this one.
    nonisolated(nonsending) func build<Value>(
        _ service: any ScopedServiceKey.Type,
        _ operation: () async throws -> Value
    ) async throws -> Value

    /// Runs `operation`, the close of the service `service` told `outcome`, once, and throws
    /// what it throws.
    nonisolated(nonsending) func close(
        _ service: any ScopedServiceKey.Type,
        outcome: ScopeOutcome,
        _ operation: () async throws -> Void
    ) async throws

    /// The root's tenants changed: `open` are open now, after a tenant opened or closed, or was
    /// evicted (`evicted`).
    func tenantsChanged(open: Int, evicted: Bool)

    /// A reload that would replace this root (`applied == false`: it was rejected, and this
    /// root stays), or that made this root current (`applied`), as generation `generation`.
    func rootReloaded(generation: Int, applied: Bool)
}

extension ScopeObserver {
    /// This observer itself.
    public func forRoot(registering services: [any ScopedServiceKey.Type]) -> (any ScopeObserver)? { self }

    /// Does nothing.
    public func scopeOpened() {}

    /// Does nothing.
    public func scopeEnded(_ outcome: ScopeOutcome) {}

    /// Runs `operation`.
    nonisolated(nonsending) public func build<Value>(
        _ service: any ScopedServiceKey.Type,
        _ operation: () async throws -> Value
    ) async throws -> Value {
        try await operation()
    }

    /// Runs `operation`.
    nonisolated(nonsending) public func close(
        _ service: any ScopedServiceKey.Type,
        outcome: ScopeOutcome,
        _ operation: () async throws -> Void
    ) async throws {
        try await operation()
    }

    /// Does nothing.
    public func tenantsChanged(open: Int, evicted: Bool) {}

    /// Does nothing.
    public func rootReloaded(generation: Int, applied: Bool) {}
}
