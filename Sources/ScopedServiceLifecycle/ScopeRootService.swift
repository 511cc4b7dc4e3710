public import Logging
public import Scoped
public import ScopedReload
public import ServiceLifecycle
import Synchronization

/// The life of an application root as a swift-service-lifecycle `Service`: validated before the
/// server serves, its running app services run, and shut down after the server has stopped.
///
/// Give it to the application's service group before the server, and let the server wait for
/// ``ready()`` before it accepts connections. In Hummingbird, `addScopeRoot(_:)`
/// (ScopedHummingbird) does both:
///
/// ```swift
/// var app = Application(router: router)
/// let rootService = ScopeRootService(root: root, logger: logger)
/// app.addServices(rootService)
/// app.beforeServerStarts { try await rootService.ready() }
/// try await app.runService()
/// ```
///
/// ``run()`` starts the app services that are themselves `Service`s (postgres-nio's client) as
/// the root builds them, validates the root, and then waits for the graceful shutdown. A service
/// group shuts its services down in reverse order, so the server, added after this service,
/// stops accepting and finishes its requests first; then this service waits for the root's
/// scopes still open (handed-off work), closes the app services newest first, stops the running
/// ones, and returns.
///
/// Give it a `ReloadableScopeRoot` to apply new configuration while it runs:
/// ``follow(_:makeRoot:onReload:)`` makes each snapshot's root current once it has validated,
/// and runs its `Service`s from their build to their close, so that a database client carried
/// over by a reload keeps running and a replaced one stops once the root it belonged to drained.
public final class ScopeRootService: Service, Sendable, CustomStringConvertible {
    /// The roots this service validates, runs and shuts down: the current one, and those it
    /// replaced while they drain.
    public let reloadable: ReloadableScopeRoot
    private let logger: Logger
    private let validationScope: @Sendable (inout ScopedValues) throws -> Void
    private let shutdownTimeout: Duration?
    private let readiness = Readiness()
    private let started = Atomic(false)
    private let running: RunningServices

    /// The root current now: the one new scopes open on.
    public var root: ScopeRoot { reloadable.current }

    /// Creates the service of `root`.
    ///
    /// - Parameters:
    ///   - root: the application root: a `ScopeRoot`, or a `ReloadableScopeRoot` whose roots
    ///     each get the same life (`follow(_:makeRoot:onReload:)` reloads it).
    ///   - logger: where app services that stop with an error are reported (a Hummingbird
    ///     application's `app.logger` serves). Validation problems are thrown, not logged: the
    ///     service group passes them on to the caller.
    ///   - validationScope: what a request scope sets when it opens, for
    ///     `ScopeRoot.validate(scope:)`.
    ///   - shutdownTimeout: how long the root's shutdown may wait for open scopes and closes
    ///     before it abandons them (logged); `nil` waits for all of them. A root replaced by a
    ///     reload drains with the same bound.
    public init(
        root: some ScopeRootSource,
        logger: Logger,
        validationScope: @escaping @Sendable (inout ScopedValues) throws -> Void = { _ in },
        shutdownTimeout: Duration? = nil
    ) {
        self.reloadable = root as? ReloadableScopeRoot ?? ReloadableScopeRoot(root.current)
        self.logger = logger
        self.validationScope = validationScope
        self.shutdownTimeout = shutdownTimeout
        self.running = RunningServices(logger: logger)
    }

    /// Applies each configuration snapshot as a new root generation, once ``ready()``.
    ///
    /// See `ReloadableScopeRoot.follow(_:makeRoot:validationScope:shutdownTimeout:onReload:)`,
    /// which this calls with the service's validation scope and shutdown timeout. The
    /// `Service`s each root builds run from their build until the root that owns them last
    /// closes them.
    ///
    /// - Parameters:
    ///   - snapshots: the configuration, each time it changes.
    ///   - makeRoot: the root for one snapshot, built as at start-up and not yet validated.
    ///   - onReload: told each snapshot's outcome, in order.
    /// - Throws: what `snapshots` throws, or the validation error of the first root.
    public func follow<Snapshots: AsyncSequence>(
        _ snapshots: Snapshots,
        makeRoot: (Snapshots.Element) throws -> ScopeRoot,
        onReload: (Result<ScopeReload, any Error>) async -> Void
    ) async throws {
        try await ready()
        try await reloadable.follow(
            snapshots,
            makeRoot: { snapshot in
                let root = try makeRoot(snapshot)
                running.watch(root)
                return root
            },
            validationScope: validationScope,
            shutdownTimeout: shutdownTimeout,
            onReload: onReload
        )
    }

    /// "ScopeRootService", as service-lifecycle's logs name it.
    public var description: String { "ScopeRootService" }

    /// Validates the root, then keeps it and its running app services up until the graceful
    /// shutdown, and shuts it down.
    ///
    /// - Throws: `ScopeValidationError` when validation finds problems, after the root
    ///   has shut down; the service group then stops the application.
    /// - Precondition: called once. A service group runs each of its services once, so only
    ///   giving this service to two groups reaches it: a start-up error, never a request's.
    public func run() async throws {
        let (first, _) = started.compareExchange(expected: false, desired: true, ordering: .relaxed)
        precondition(first, "ScopeRootService.run() called twice: give the service to one service group")
        let root = self.root
        running.watch(root)
        let problems = await root.validate(scope: validationScope)
        guard problems.isEmpty else {
            let error = ScopeValidationError(problems: problems)
            readiness.settle(.failure(error))
            await root.shutdown()
            await running.stop()
            throw error
        }
        readiness.settle(.success(()))
        // Cancellation (the group's shutdown timeout passed) ends the wait too.
        try? await gracefulShutdown()
        await shutDownRoot()
        await running.stop()
    }

    /// Shuts the root down, within ``shutdownTimeout`` when there is one.
    private func shutDownRoot() async {
        guard let shutdownTimeout else { return await root.shutdown() }
        let open = root.openScopeCount
        if !(await root.shutdown(abandoningAfter: shutdownTimeout)) {
            logger.warning(
                "Shutdown abandoned what had not ended after \(shutdownTimeout) (\(open) scopes were open when it began)"
            )
        }
    }

    /// The services of an application that serves with `server`, in a service group's order:
    /// this service, then `server`, which starts once the root is ready.
    ///
    /// Any server that is a swift-service-lifecycle `Service` (a transport of generated OpenAPI
    /// handlers, a gRPC server, a queue consumer) then gets the root's whole lifecycle in a line:
    ///
    /// ```swift
    /// let rootService = ScopeRootService(root: root, logger: logger)
    /// try await ServiceGroup(services: rootService.services(serving: server), logger: logger).run()
    /// ```
    ///
    /// The root is validated before `server` runs, and a root that fails validation stops the
    /// group with its `ScopeValidationError` before `server` starts. At the graceful shutdown,
    /// the group stops `server` first (it finishes its requests); then the root shuts down.
    ///
    /// - Parameter server: the service that serves the application's requests.
    /// - Returns: the services to give the group, in that order.
    public func services(serving server: some Service) -> [any Service] {
        [self, ServerAfterReadiness(rootService: self, server: server)]
    }

    /// Returns once ``run()`` has validated the root; the server waits for it before it binds.
    ///
    /// - Throws: the `ScopeValidationError` that stopped `run()`, or
    ///   `CancellationError` when the waiting task is cancelled first.
    public func ready() async throws {
        try await readiness.wait()
    }
}

/// A server that starts once its root service is ready: validated, its running services up.
private struct ServerAfterReadiness<Server: Service>: Service, CustomStringConvertible {
    let rootService: ScopeRootService
    let server: Server

    func run() async throws {
        try await rootService.ready()
        try await server.run()
    }

    /// The server's own name, as service-lifecycle's logs show it.
    var description: String { "\(server)" }
}

/// A result that several tasks wait for, settled once.
private final class Readiness: Sendable {
    private enum State {
        case pending(waiters: [Int: CheckedContinuation<Void, any Error>], nextID: Int)
        case settled(Result<Void, any Error>)
    }

    private let state = Mutex(State.pending(waiters: [:], nextID: 0))

    func settle(_ result: Result<Void, any Error>) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            guard case .pending(let waiters, _) = state else { preconditionFailure("settled twice") }
            state = .settled(result)
            return Array(waiters.values)
        }
        for waiter in waiters { waiter.resume(with: result) }
    }

    func wait() async throws {
        let id = Mutex<Int?>(nil)
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let settled = state.withLock { state -> Result<Void, any Error>? in
                    switch state {
                    case .settled(let result):
                        return result
                    case .pending(var waiters, let nextID):
                        if Task.isCancelled { return .failure(CancellationError()) }
                        waiters[nextID] = continuation
                        state = .pending(waiters: waiters, nextID: nextID + 1)
                        id.withLock { $0 = nextID }
                        return nil
                    }
                }
                if let settled { continuation.resume(with: settled) }
            }
        } onCancel: {
            // Under the state lock, as the registration is: a waiter not registered yet sees
            // the cancellation itself.
            let cancelled = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                guard case .pending(var waiters, let nextID) = state, let waiterID = id.withLock({ $0 }) else {
                    return nil
                }
                let waiter = waiters.removeValue(forKey: waiterID)
                state = .pending(waiters: waiters, nextID: nextID)
                return waiter
            }
            cancelled?.resume(throwing: CancellationError())
        }
    }
}
