/// The application root scope: built once at start-up, parent of every request scope.
///
/// A root holds the values set in code and by configuration, builds ``ScopedLifetime/app``
/// services once, and opens a child scope per request with ``withScope(_:operation:)``:
///
/// ```swift
/// let root = ScopeRoot(services: [DatabaseKey.self, SessionKey.self]) {
///     $0.movieRepository = SQLiteMovieRepository()
/// }
/// let problems = await root.validate()  // before binding the port
/// try await root.withScope({ $0.requestID = id }) {
///     try await handle(request)
/// }
/// await root.shutdown()
/// ```
public final class ScopeRoot: Sendable {
    /// The root's values: what every scope opened on it starts from.
    public let values: ScopedValues
    let context: ServiceOwner
    /// What the root has beside its services: its open scopes and tenants, its watchers, what a
    /// reload carried over.
    let rootContext: RootContext
    /// What opens the root's tenants, found among its observers when it was created; kept here,
    /// not with the observers its scopes tell, so that the tenants it holds make no cycle with
    /// them, and a root no one refers to is released with its tenants.
    let tenantProvider: (any TenantProvider)?

    /// Creates a root that sets no values of its own.
    ///
    /// See ``init(startingFrom:services:requirements:onCloseError:closeTimeout:observers:configure:)`` for
    /// the parameters.
    public convenience init(
        services: [any ScopedServiceKey.Type] = [],
        requirements: [any Sendable.Type] = [],
        onCloseError: (@Sendable (ScopeCloseError) -> Void)? = nil,
        closeTimeout: Duration? = nil,
        observers: [any ScopeObserver] = []
    ) {
        self.init(
            services: services,
            requirements: requirements,
            onCloseError: onCloseError,
            closeTimeout: closeTimeout,
            observers: observers
        ) { _ in }
    }

    /// Creates a root.
    ///
    /// Created at start-up, outside any scope, the root starts from every entry's default. Created
    /// inside a test scope (the `.scoped` trait or `withTestScope`), it starts from that scope
    /// instead: the test's overrides, and its failure for live-only entries, reach every scope the
    /// root opens, request scopes included.
    ///
    /// - Parameters:
    ///   - base: the values the root starts from, instead of where it is created: pass
    ///     `ScopedValues()` for a root that starts from defaults even inside a test scope, or the
    ///     values of a scope whose overrides the root must keep. The root reports to the
    ///     observers of `base`'s root that take ``ScopeObserverEvents/nestedRoots`` as well (a
    ///     test's checks: a live-only entry read in any of its scopes fails the test).
    ///   - services: the services this application uses; ``validate(scope:)`` builds each and
    ///     diagnostics list them. Unlisted services still work.
    ///   - requirements: types of objects every scope must have (set on the root or when a
    ///     scope opens); ``validate(scope:)`` reports each one missing.
    ///   - onCloseError: receives close failures that cannot be thrown, because the scope's
    ///     operation threw its own error, or because the scope had already ended; by default
    ///     they are logged at `error` level with the label `Scoped`, through swift-log.
    ///   - closeTimeout: how long a service's close may run before it is abandoned and
    ///     reported as a ``ScopeCloseError/Timeout``, for keys that set no
    ///     ``ScopedServiceKey/closeTimeout`` of their own; `nil` (the default) waits for every
    ///     close, and costs a close no task of its own.
    ///   - observers: what the root tells when its scopes open and end and its services are
    ///     built and closed (ScopedInstrumentation's spans and metrics, for one), and what opens
    ///     its tenants (ScopedTenants' `Tenancy`, a ``TenantProvider``); see ``ScopeObserver``.
    ///     None by default.
    ///   - configure: sets the root's values.
    public convenience init(
        startingFrom base: ScopedValues? = nil,
        services: [any ScopedServiceKey.Type] = [],
        requirements: [any Sendable.Type] = [],
        onCloseError: (@Sendable (ScopeCloseError) -> Void)? = nil,
        closeTimeout: Duration? = nil,
        observers: [any ScopeObserver] = [],
        configure: (inout ScopedValues) throws -> Void
    ) rethrows {
        let base = base ?? ScopedValues.testScopeOrDefaults
        let baseRegistry = base.scope?.registry
        let (observers, tenantProvider) = RootObservers.forRoot(
            observers,
            inheriting: baseRegistry?.observers.forNestedRoots ?? [],
            registering: services
        )
        try self.init(
            registry: ScopeRegistry(
                services: services.map { ScopeRegistry.Service($0) },
                requirements: requirements.map { ScopeRegistry.Requirement($0) },
                onCloseError: onCloseError ?? ScopeRegistry.logCloseError,
                closeTimeout: closeTimeout,
                isInTest: baseRegistry?.isInTest ?? false,
                observers: observers
            ),
            tenantProvider: tenantProvider,
            base: base,
            configure: configure
        )
    }

    /// Creates a root on an explicit registry; a test's root passes one that says so.
    init(
        registry: ScopeRegistry,
        tenantProvider: (any TenantProvider)?,
        base: ScopedValues = ScopedValues(),
        configure: (inout ScopedValues) throws -> Void
    ) rethrows {
        let rootContext = RootContext(registry: registry)
        let context = ServiceOwner(root: rootContext, registry: registry)
        var values = ScopedValues(node: base.node.flattened(depth: 0, scope: context))
        try configure(&values)
        values.node = values.node.asOwnNode()
        self.values = values
        self.context = context
        self.rootContext = rootContext
        self.tenantProvider = tenantProvider
    }

    /// Runs `operation` in a new scope, child of this root, whose values are the root's changed
    /// by `update`; closes the services the scope built when the operation ends.
    ///
    /// - Throws: what `operation` throws; or, when it returned but a service failed to close,
    ///   a ``ScopeCloseError``.
    @inlinable
    nonisolated(nonsending) public func withScope<R>(
        _ update: (inout ScopedValues) throws -> Void = { _ in },
        operation: () async throws -> R
    ) async throws -> R {
        try await runInChildScope(on: values, update: update, operation: operation)
    }

    /// Opens a child scope of this root that stays open until you close it.
    ///
    /// For work whose end is not the end of one closure; see ``Scope``. Everything else uses
    /// ``withScope(_:operation:)``.
    ///
    /// - Parameter update: changes the scope's values as it opens.
    /// - Returns: the open scope, counted in ``openScopeCount`` until it closes.
    /// - Throws: what `update` throws; no scope is then opened.
    public func openScope<Failure: Error>(
        _ update: (inout ScopedValues) throws(Failure) -> Void
    ) throws(Failure) -> Scope {
        try Scope(childOf: values, in: context, update: update)
    }

    /// Opens a child scope of this root, with the root's values, that stays open until you
    /// close it; see ``openScope(_:)``.
    ///
    /// - Returns: the open scope, counted in ``openScopeCount`` until it closes.
    public func openScope() -> Scope {
        Scope(childOf: values, in: context) { _ in }
    }

    /// Waits for the scopes opened on this root to close, then closes its tenants' services,
    /// then the app services it built, newest first.
    ///
    /// Close failures go to the root's close-error handler.
    public func shutdown() async {
        await rootContext.drain()
        // Tenant services may use app services: they close first.
        await tenantProvider?.shutdown()
        await context.closeReportingFailures(with: values.node)
    }

    /// Shuts the root down as ``shutdown()`` does, but stops waiting after `timeout`.
    ///
    /// Scopes still open and closes still running then are abandoned (they go on in their own
    /// tasks) and reported to the root's close-error handler, so that a handler or a close that
    /// never returns cannot hold a process's exit.
    ///
    /// - Returns: `true` when everything closed in time; `false` when something was abandoned.
    @discardableResult
    public func shutdown(abandoningAfter timeout: Duration) async -> Bool {
        do {
            try await DeadlineWatchdog.shared.run({ await self.shutdown() }, abandoningAfter: timeout) {
                ScopedError.timedOut(after: timeout)
            }
            return true
        } catch {
            let open = openScopeCount
            context.registry.onCloseError(
                ScopeCloseError(
                    failures: [.init(entry: "shutdown (\(open) scopes still open)", error: error)],
                    outcome: .cancelled
                )
            )
            return false
        }
    }

    /// The number of scopes opened on this root that have not closed yet.
    public var openScopeCount: Int { rootContext.openScopes.count }

    /// How much work handed off in this root's scopes with
    /// ``handOff(_:timeout:fileID:line:operation:)`` to start after its scope's commit never
    /// started, because the scope did not commit; each is also logged with where it was handed
    /// off.
    public var handOffsNotStarted: Int { rootContext.notStartedHandOffCount }

    /// How much work handed off in this root's scopes failed: threw, ran past its timeout, or
    /// ended with a service that failed to close; each is also logged, as a warning on
    /// `Logger.current`, with where it was handed off.
    public var handOffsFailed: Int { rootContext.failedHandOffCount }
}
