public import Logging
public import Scoped
public import ScopedServiceLifecycle
public import ServiceLifecycle
import Synchronization
public import Vapor

/// The application root's life in a Vapor application, the same as in a swift-service-lifecycle
/// application: its running app services run, it is validated before the server binds its port,
/// and it shuts down after the server has stopped and finished its requests.
///
/// ```swift
/// app.lifecycle.use(ScopeRootLifecycle(root: root, logger: app.logger))
/// app.middleware.use(RequestScopeMiddleware(root: root))
/// try await app.execute()
/// try await app.asyncShutdown()
/// ```
///
/// It runs a `ScopeRootService` in a swift-service-lifecycle `ServiceGroup` of its own, from
/// the application's boot to its shutdown, so both kinds of application share one
/// implementation:
///
/// - **Running app services.** An app service that is a `Service` runs from the moment the root
///   builds it: postgres-nio's `PostgresClient`, which serves no connection before its `run()`
///   has started, works in a Vapor application with no other set-up.
/// - **Validation before the port binds.** The boot waits until the root has validated; a root
///   with problems stops it with a `ScopeValidationError` that lists every one, before any
///   request is served.
/// - **Shutdown after the server.** At the application's shutdown, Vapor's HTTP server first
///   stops accepting and finishes its requests in flight; then the root waits for its scopes
///   still open (handed-off work), within `shutdownTimeout` when there is one, closes its app
///   services newest first, and the running ones stop.
/// - **Reload.** Given a `ReloadableScopeRoot`, the service's
///   `ScopeRootService/follow(_:makeRoot:onReload:)` applies each configuration snapshot; run
///   it in one of the `services`, which run in the same group for the application's life (see
///   ``init(service:logger:services:)``).
public final class ScopeRootLifecycle: LifecycleHandler, Sendable {
    /// The root's service: the roots it runs, and `follow` for a root that reloads.
    public let service: ScopeRootService
    private let services: [any Service]
    private let logger: Logger
    private let running = Mutex<(group: ServiceGroup, task: Task<Void, Never>)?>(nil)

    /// Ties `root`'s life to the application's.
    ///
    /// - Parameters:
    ///   - root: the application root: a `ScopeRoot`, or a `ReloadableScopeRoot` whose roots
    ///     each get the same life.
    ///   - logger: where app services that stop with an error, and a shutdown that abandons
    ///     work, are reported; usually `app.logger`.
    ///   - validationScope: what a request scope sets when it opens, for
    ///     `ScopeRoot.validate(scope:)`.
    ///   - shutdownTimeout: how long the root's shutdown may wait for open scopes and closes
    ///     before it abandons them (logged); `nil` waits for all of them.
    ///   - services: other services to run for the application's life beside the root, such
    ///     as one that follows configuration changes. At shutdown each gets swift-service-
    ///     lifecycle's graceful shutdown, newest first, and the root shuts down after they have
    ///     returned; one that ends early, or fails (logged), leaves the root running.
    public convenience init(
        root: some ScopeRootSource,
        logger: Logger = Logger(label: "Scoped"),
        validationScope: @escaping @Sendable (inout ScopedValues) throws -> Void = { _ in },
        shutdownTimeout: Duration? = nil,
        services: [any Service] = []
    ) {
        let service = ScopeRootService(
            root: root,
            logger: logger,
            validationScope: validationScope,
            shutdownTimeout: shutdownTimeout
        )
        self.init(service: service, logger: logger, services: services)
    }

    /// Ties the life of `service`'s roots to the application's: for a root that reloads, make
    /// the service first, so that a service of `services` can follow configuration changes
    /// with it.
    ///
    /// ```swift
    /// let rootService = ScopeRootService(root: reloadable, logger: app.logger)
    /// let follower = ConfigurationFollower(rootService: rootService)  // calls rootService.follow(…)
    /// app.lifecycle.use(ScopeRootLifecycle(service: rootService, logger: app.logger, services: [follower]))
    /// ```
    ///
    /// - Parameters:
    ///   - service: the roots' service, with its validation scope and shutdown bound; given to
    ///     one application only.
    ///   - logger: where the services that stop with an error are reported.
    ///   - services: other services to run for the application's life beside the root, as for
    ///     the initializer that takes a `ScopeRoot`.
    public init(service: ScopeRootService, logger: Logger = Logger(label: "Scoped"), services: [any Service] = []) {
        self.service = service
        self.services = services
        self.logger = logger
    }

    /// Starts the root's service group and returns once the root has validated.
    ///
    /// `@concurrent`, as Vapor's requirement is: Vapor is built without
    /// `NonisolatedNonsendingByDefault`, which this package enables.
    ///
    /// - Throws: `ScopeValidationError` when a service cannot be built, after the root and its
    ///   running services have stopped.
    @concurrent
    public func willBootAsync(_ application: Application) async throws {
        let task = try start(reportingValidation: false)
        do {
            try await service.ready()
        } catch {
            await task.value
            throw error
        }
    }

    /// Starts the root's service group without waiting for the root's validation.
    ///
    /// Vapor's synchronous boot, which VaporTesting's `app.testing()` takes, calls this instead
    /// of ``willBootAsync(_:)``. A validation that fails is then logged, and the root shuts down.
    public func willBoot(_ application: Application) throws {
        _ = try start(reportingValidation: true)
    }

    /// Starts the service group that runs the root's service and the services beside it, once.
    private func start(reportingValidation: Bool) throws -> Task<Void, Never> {
        let logger = self.logger
        // The root's service first: a service group shuts its services down in reverse order,
        // so the others stop before the root does.
        let beside = services.map { service in
            ServiceGroupConfiguration.ServiceConfiguration(
                service: Beside(base: service, logger: logger),
                successTerminationBehavior: .ignore,
                failureTerminationBehavior: .ignore
            )
        }
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(services: [.init(service: service)] + beside, logger: logger)
        )
        // Started under the lock, so that a second boot never runs the root's service again.
        let task = running.withLock { running -> Task<Void, Never>? in
            guard case .none = running else { return nil }
            // One task for the application's life: the group's, which runs the root's services.
            let task = Task {
                do {
                    try await group.run()
                } catch let error as ScopeValidationError {
                    // The asynchronous boot throws it (from `ready()`); the synchronous one cannot.
                    if reportingValidation { logger.error("\(error)") }
                } catch {
                    logger.error("The application root's services stopped with an error: \(error)")
                }
            }
            running = (group, task)
            return task
        }
        guard let task else {
            throw Abort(.internalServerError, reason: "ScopeRootLifecycle booted twice: give it to one application")
        }
        return task
    }

    /// Stops the application's HTTP server, which finishes its requests in flight, then shuts
    /// the root down and stops its running services.
    @concurrent
    public func shutdownAsync(_ application: Application) async {
        guard let (group, task) = running.withLock({ $0 }) else { return }
        // Vapor stops its server after its lifecycle handlers; the root must outlive the
        // requests, so it stops here first (a second shutdown of the server does nothing).
        await application.server.shutdown()
        await group.triggerGracefulShutdown()
        await task.value
    }
}

/// A service run beside the root: it ends, or fails (logged), without stopping the root, which
/// serves the application's requests until the application shuts down.
private struct Beside: Service {
    let base: any Service
    let logger: Logger

    func run() async throws {
        do {
            try await base.run()
        } catch is CancellationError {
        } catch {
            logger.error("Service \(type(of: base)) stopped with an error: \(error)")
        }
    }
}
