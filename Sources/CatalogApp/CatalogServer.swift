import MovieCatalog
import PostgresNIO
package import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
package import Logging
import Scoped
import ScopedReload
package import ScopedDatabase
import ScopedDiagnostics
import ScopedHummingbird
import ScopedInstrumentation
import ScopedPostgres
import ScopedSQLite
import ScopedServiceLifecycle
import ScopedTenants
import ServiceLifecycle
import Synchronization
import UnixSignals

/// Assembles the movie catalog service: the application root, the router, and the server.
package enum CatalogServer {
    /// The application root: the database from configuration, the catalog's variants, and the
    /// repository variant configuration chose.
    ///
    /// - Parameters:
    ///   - configuration: the loaded profile.
    ///   - base: the values the root starts from: by default the test scope it is created in,
    ///     or defaults outside tests.
    ///   - instrumentation: where the root reports spans and metrics; by default the tracer
    ///     bootstrapped and the process's Prometheus registry (with neither, the root reports
    ///     nothing and runs no instrumentation code).
    ///   - logger: where a close that failed or was abandoned is logged.
    /// - Returns: the root, not yet validated.
    /// - Throws: `UnknownVariantError` for a repository variant
    ///   that was not registered.
    static func makeRoot(
        _ configuration: AppConfiguration,
        base: ScopedValues? = nil,
        instrumentation: ScopeInstrumentation? = nil,
        logger: Logger = Logger(label: "catalog")
    ) throws -> ScopeRoot {
        // The root reports its scopes and services to the metrics backend bootstrapped now.
        if configuration.metricsEnabled { PrometheusBackend.bootstrap() }
        let services: [any ScopedServiceKey.Type] =
            switch (configuration.databaseKind, configuration.tenants) {
            // With tenants, each request's session is on its tenant's database, opened on the
            // tenant's first request: no application database to open or validate.
            case (.sqlite, .some): [SQLiteTenantDatabaseKey.self]
            case (.sqlite, nil): [SQLiteDatabaseKey.self, SQLiteSessionKey.self]
            // With tenants on PostgreSQL: a schema per tenant, through the application's client.
            case (.postgres, .some):
                [PostgresClientKey.self, PostgresReadClientKey.self, PostgresTenantDatabaseKey.self]
            case (.postgres, nil):
                [PostgresClientKey.self, PostgresReadClientKey.self, PostgresDatabaseKey.self, PostgresSessionKey.self]
            }
        var variants = CatalogVariants.make()
        variants.register("sqlite", of: \.debugDatabase) { SQLiteDebugDatabase() }
        variants.register("postgres", of: \.debugDatabase) { PostgresDebugDatabase() }
        return try ScopeRoot(
            startingFrom: base,
            services: services,
            // A close that fails or runs past its timeout cannot be thrown to a request that has
            // been answered: it is logged, with the service's name.
            onCloseError: { error in logger.error("A scope's close failed: \(error)") },
            closeTimeout: configuration.closeTimeout,
            // Spans and metrics where a backend is bootstrapped; the dependency graph that
            // `/debug/graph` serves and the start-up report logs; what the app services read,
            // for a reload to carry over those whose configuration did not change; and, in the
            // `multitenant` profile, the tenants.
            observers: [instrumentation ?? .bootstrapped, DependencyGraphRecorder(), ReloadRecorder()]
                + (configuration.tenants.map { [$0.tenancy(registry: configuration.tenantRegistry?.accepted)] } ?? [])
        ) { values in
            // The named variants configuration may select, at the root and per request.
            values.variants = variants
            switch configuration.databaseKind {
            case .sqlite: values.sqliteConfiguration = configuration.database
            case .postgres: values.postgresConfiguration = configuration.postgres
            }
            // The rule each request follows: the root's, so that a reload changes it.
            values.overrideRule = configuration.overrideRule
            // What `/health` reports on: each part the configuration runs contributes its check.
            // With tenants a request of no tenant has no database to check.
            if configuration.tenants == nil { values.contribute(DatabaseHealthCheck(), to: \.healthChecks) }
            if let provider = configuration.databaseSettings?.provider {
                values.contribute(ListenerHealthCheck(name: "settings") { provider.status }, to: \.healthChecks)
            }
            if let registry = configuration.tenantRegistry?.registry {
                values.contribute(ListenerHealthCheck(name: "tenantRegistry") { registry.status }, to: \.healthChecks)
            }
            // The backend's variant of every entry that depends on it. `sqlite` is each entry's
            // default: selecting it explicitly would hide a test's mock.
            for entry in CatalogVariants.backendEntries + ["debugDatabase"] {
                let variant =
                    entry == CatalogVariants.entry
                    ? configuration.repositoryVariant : configuration.databaseKind.rawValue
                if variant != "sqlite" { try values.selectVariant(variant, of: entry) }
            }
        }
    }

    /// What a request scope sets when it opens, for validation.
    static let validationScope: @Sendable (inout ScopedValues) -> Void = { $0.requestID = "startup-validation" }

    /// Validates the root and seeds the database when configured to; throws before any port
    /// is bound when the root cannot serve.
    static func prepare(_ root: ScopeRoot, configuration: AppConfiguration, logger: Logger) async throws {
        let problems = await root.validate(scope: validationScope)
        guard problems.isEmpty else { throw ScopeValidationError(problems: problems) }
        try await seed(root, configuration: configuration, logger: logger)
    }

    /// Once the root is validated: logs what each app service took to build, and seeds the
    /// database when configured to.
    static func seed(_ root: ScopeRoot, configuration: AppConfiguration, logger: Logger) async throws {
        // Validation built every app service: what each took, slowest first, once.
        // With what each read: a reload carries it over while those hold the same values.
        let graph = root.dependencyGraph() ?? DependencyGraph(services: [], edges: [])
        for (name, duration) in graph.appServiceBuilds {
            let microseconds =
                duration.components.seconds * 1_000_000 + duration.components.attoseconds / 1_000_000_000_000
            let inputs = graph.services.first { $0.name == name }?.inputs ?? []
            let from = inputs.isEmpty ? "" : " from \(inputs.joined(separator: ", "))"
            logger.notice("Built app service \(name) in \(microseconds / 1000).\(microseconds % 1000 / 100) ms\(from)")
        }
        // A tenant's database starts empty, as a new customer's catalog does.
        if configuration.seed && configuration.profile != .production && configuration.tenants == nil {
            let inserted = try await root.withScope {
                // Instances that start together on one database seed it once. On PostgreSQL the
                // seeding transaction first takes a lock that its commit releases, so the next
                // instance's count, a statement of its own under READ COMMITTED, sees the
                // movies; on SQLite the transaction holds the write lock from its BEGIN
                // IMMEDIATE, reads included.
                if configuration.databaseKind == .postgres {
                    _ = try await ScopedValues.current.postgresSession.query(
                        "SELECT pg_advisory_xact_lock(\(Self.seedingLockKey))"
                    )
                }
                return try await SampleCatalog.seedIfEmpty()
            }
            if inserted > 0 { logger.info("Seeded the empty database with \(inserted) movies") }
        }
    }

    /// The advisory lock seeding takes on PostgreSQL: a constant no other part of the example
    /// uses (the migrations' lock is `PostgresMigrator`'s own).
    static let seedingLockKey: Int64 = 0x5C0_9ED_5EED

    /// The router: a request ID, metrics, a trace span, a log line, an API error and a request
    /// scope around every route; the catalog, health, metrics, OpenAPI and debug routes.
    ///
    /// - Returns: the router and the table of the routes it serves.
    static func makeRouter(
        root: ScopeRoot,
        configuration: AppConfiguration
    ) -> (router: Router<BasicRequestContext>, routes: RouteTable) {
        makeRouter(root: ReloadableScopeRoot(root), configuration: configuration, reloads: ReloadLedger())
    }

    /// The router on a root that reloads.
    ///
    /// Each request opens its scope on the root current when it arrives, and follows that root's
    /// override rule. What the router itself is made of
    /// (its debug and metrics routes) is read once, from `configuration`.
    static func makeRouter(
        root: ReloadableScopeRoot,
        configuration: AppConfiguration,
        reloads: ReloadLedger
    ) -> (router: Router<BasicRequestContext>, routes: RouteTable) {
        let router = Router()
        let table = RouteTable()
        let ignoredOverride = Mutex(false)
        router.add(middleware: RequestIDMiddleware())
        // The ID the span records, when spans leave the process.
        if configuration.otlp != nil { router.add(middleware: RequestIDHeaderMiddleware()) }
        // Inside the request-ID middleware, which turns errors into responses, and outside the
        // API error middleware: a failed request reaches them as an `APIError`, which carries
        // its status, so a 404 is counted and traced as a 404 and its error is recorded.
        if configuration.metricsEnabled { router.add(middleware: MetricsMiddleware()) }
        // The tenant's ID goes into the span when the server has tenants, and into the
        // request's log line through the logger's metadata; the request's ID when spans are
        // exported. Nothing else: each header recorded costs every request, also with no tracer
        // (`TracingMiddleware` records into a no-op span too: 7 retains per request each).
        var recorded: [HTTPField.Name] = configuration.otlp == nil ? [] : [.requestID]
        if configuration.tenants != nil { recorded.append(TenantHeader.name) }
        router.add(middleware: TracingMiddleware(recordingHeaders: recorded))
        if configuration.tenants != nil { router.add(middleware: TenantHeader.Middleware()) }
        router.add(middleware: RequestLogMiddleware(level: .debug))
        router.add(middleware: APIErrorMiddleware(routes: table))
        var tenant: RequestScopeMiddleware<BasicRequestContext>.TenantResolver?
        if configuration.tenants != nil {
            tenant = { (request: Request, _: BasicRequestContext) throws -> TenantID? in
                try TenantHeader.tenant(of: request)
            }
        }
        router.add(
            middleware: RequestScopeMiddleware(root: root, tenant: tenant) { values, request, context in
                values.transactionMode = transactionMode(for: request.method, path: request.uri.path)
                try applyOverrideRule(
                    values.overrideRule,
                    to: &values,
                    request: request,
                    logger: context.logger,
                    ignoredOverride: ignoredOverride
                )
            }
        )
        let routes = RouteRecorder(router: router, table: table)
        // The checks the configured parts contributed; 200 while the process serves.
        routes.on(.get, "/health") { _, _ in try JSONResponse.make(try await HealthReport.current()) }
        // Every profile: counts and durations, no secrets.
        routes.on(.get, "/metrics") { _, _ in
            Response(
                status: .ok,
                headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: PrometheusBackend.exposition()))
            )
        }
        let openAPIDocument = ByteBuffer(string: OpenAPIDocument.json)  // encoded once, not per request
        routes.on(.get, "/openapi.json") { _, _ in
            Response(
                status: .ok,
                headers: [.contentType: "application/json; charset=utf-8"],
                body: .init(byteBuffer: openAPIDocument)
            )
        }
        MovieController().addRoutes(to: router, table: table)
        // A plain GET of the WebSocket route: say how to reach it, rather than "invalid id".
        routes.on(.get, "/movies/live") { _, _ -> Response in
            throw APIError(
                status: .upgradeRequired,
                code: "upgrade_required",
                message: "/movies/live is a WebSocket: connect with an upgrade request.",
                headers: [.upgrade: "websocket"]
            )
        }
        if configuration.debugRoutes {
            DebugRoutes.add(to: routes, root: root, reloads: reloads, tenancy: configuration.tenants != nil)
        }
        return (router, table)
    }

    /// The transaction a request's session runs in: a request that may write runs every
    /// statement in one write transaction; one that only reads never waits for a writer, and on
    /// PostgreSQL runs each statement on its own (a page and its total come from one statement),
    /// but for the export, whose batches must come from one snapshot.
    package static func transactionMode(for method: HTTPRequest.Method, path: String) -> TransactionMode {
        guard method == .get || method == .head else { return .readWrite }
        return path == "/movies/export" ? .readOnlySnapshot : .readOnly
    }

    /// The sample catalog's override header, parsed once.
    private static let overrideHeader = HTTPField.Name(SampleCatalog.overrideHeader)!

    /// Selects the variant a request's header asks for, where the profile has a rule for it.
    ///
    /// Without a rule the header is ignored, and that is logged once.
    private static func applyOverrideRule(
        _ rule: AppConfiguration.OverrideRule?,
        to values: inout ScopedValues,
        request: Request,
        logger: Logger,
        ignoredOverride: borrowing Mutex<Bool>
    ) throws {
        guard let rule else {
            if request.headers[overrideHeader] != nil,
                ignoredOverride.withLock({ logged in
                    defer { logged = true }
                    return !logged
                })
            {
                logger.notice("Ignoring the \(SampleCatalog.overrideHeader) header: this profile has no override rule")
            }
            return
        }
        guard let variant = request.headers[rule.headerName] else { return }
        guard rule.variants.contains(variant) else {
            throw APIError.badRequest(
                "\(rule.header) must be one of: \(rule.variants.joined(separator: ", ")).",
                field: rule.header,
                code: "invalid_override"
            )
        }
        try values.selectVariant(variant, of: rule.entry)
    }

    /// The HTTP application on `root`: the router and the WebSocket upgrade, with no services.
    static func makeApplication(
        root: ScopeRoot,
        configuration: AppConfiguration,
        logger: Logger
    ) -> Application<RouterResponder<BasicRequestContext>> {
        makeApplication(
            root: ReloadableScopeRoot(root),
            configuration: configuration,
            reloads: ReloadLedger(),
            logger: logger
        )
    }

    /// The HTTP application on a root that reloads; WebSocket connections keep the root they
    /// connected on.
    static func makeApplication(
        root: ReloadableScopeRoot,
        configuration: AppConfiguration,
        reloads: ReloadLedger,
        logger: Logger
    ) -> Application<RouterResponder<BasicRequestContext>> {
        // Upgrade requests go through their own router: each connection opens a scope on the
        // root, and each message a scope of its own.
        let webSocketRouter = Router(context: BasicWebSocketRequestContext.self)
        webSocketRouter.add(middleware: RequestIDMiddleware())
        var tenant: (@Sendable (Request, BasicWebSocketRequestContext) throws -> TenantID?)?
        if configuration.tenants != nil {
            tenant = { (request: Request, _: BasicWebSocketRequestContext) throws -> TenantID? in
                try TenantHeader.tenant(of: request)
            }
        }
        LiveRatings().addRoute(to: webSocketRouter, root: root, tenant: tenant)
        let webSocketResponder = webSocketRouter.buildResponder()
        return Application(
            router: makeRouter(root: root, configuration: configuration, reloads: reloads).router,
            // hummingbird-websocket's upgrade channel, with a guard on the first request head
            // that it does not set itself (see `FirstRequestGuard`).
            server: HTTPServerBuilder { responder in
                GuardedChildChannel(
                    base: HTTP1WebSocketUpgradeChannel(
                        responder: responder,
                        webSocketResponder: webSocketResponder,
                        configuration: .init(http1: configuration.http1)
                    ),
                    timeout: configuration.idleTimeout
                )
            },
            configuration: configuration.server,
            onServerRunning: { channel in
                logger.notice(
                    "Listening on \(channel.localAddress?.description ?? "?") (profile \(configuration.profile.rawValue))"
                )
            },
            logger: logger
        )
    }

    /// How long the movie history keeps a change.
    static let historyRetention = Duration.seconds(90 * 24 * 3600)

    /// With tenants, the tenants whose history the pruning job prunes: those with a database.
    static func knownTenants(
        _ configuration: AppConfiguration,
        root: ReloadableScopeRoot
    ) -> (@Sendable () async throws -> [TenantID])? {
        guard let tenants = configuration.tenants else { return nil }
        return { try await KnownTenants.list(configuration.databaseKind, directory: tenants.directory, root: root) }
    }

    /// `ExampleServer prune-history`: the history job's work, once, as a command.
    ///
    /// One unit of work in one scope: the root is built as the server builds it, the pruning
    /// commits only if it succeeded, and the root shuts down after it, closing the database.
    ///
    /// - Returns: how many history entries were deleted.
    package static func pruneHistory(_ configuration: AppConfiguration, logger: Logger) async throws -> Int {
        let root = try makeRoot(configuration, logger: logger)
        let job = HistoryPruningJob(
            root: root,
            retention: historyRetention,
            logger: logger,
            tenants: knownTenants(configuration, root: ReloadableScopeRoot(root))
        )
        // Shuts the root down after the job, whether it succeeded or not.
        return try await root.withRunningServices(logger: logger) { try await job.runOnce() }
    }

    /// Runs the server until SIGTERM or SIGINT, drains requests for at most the configured
    /// timeout, then shuts the root down, closing the database last; a PostgreSQL client stops
    /// after that.
    package static func run(
        _ configuration: AppConfiguration,
        environment: [String: String] = [:],
        logger: Logger
    ) async throws {
        // Before the first root, which reports to the backends bootstrapped when it is made.
        let exporters =
            try configuration.otlp.map {
                try OTLPExport.bootstrap($0, metrics: configuration.metricsEnabled, logger: logger)
            } ?? []
        let root = ReloadableScopeRoot(try makeRoot(configuration, logger: logger))
        let reloads = ReloadLedger(
            settings: configuration.databaseSettings?.provider,
            settingsVersion: configuration.databaseSettings?.version ?? 0,
            tenantRegistry: configuration.tenantRegistry
        )
        var application = makeApplication(root: root, configuration: configuration, reloads: reloads, logger: logger)
        // Validated before the port binds; shut down after the server and the job have stopped
        // (a service group stops its services in reverse order).
        let rootService = ScopeRootService(
            root: root,
            logger: logger,
            validationScope: validationScope,
            shutdownTimeout: configuration.shutdownTimeout
        )
        application.addScopeRoot(rootService)
        application.beforeServerStarts { try await seed(root.current, configuration: configuration, logger: logger) }
        application.addServices(
            HistoryPruningJob(
                root: root,
                retention: historyRetention,
                logger: logger,
                tenants: knownTenants(configuration, root: root)
            ) {
                try await rootService.ready()
            },
            // Stops first: no reload begins while the server drains.
            try await LiveConfiguration(
                started: configuration,
                environment: environment,
                rootService: rootService,
                makeRoot: { try makeRoot($0, logger: logger) },
                reloads: reloads,
                logger: logger
            )
        )
        // With `tenants.fromDatabase`: each tenant changed in the registry is evicted, to open as
        // it is now on its next request.
        if let (registry, accepted) = configuration.tenantRegistry {
            application.addServices(
                TenantRegistryFollower(registry: registry, accepted: accepted, root: root, logger: logger)
            )
        }
        var group = ServiceGroupConfiguration(
            // The exporters stop after the application: what its last requests recorded is sent.
            services: exporters + [application],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger
        )
        group.maximumGracefulShutdownDuration = configuration.shutdownTimeout
        try await ServiceGroup(configuration: group).run()
        logger.notice("Stopped")
    }
}
