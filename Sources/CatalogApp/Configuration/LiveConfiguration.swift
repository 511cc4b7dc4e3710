import Configuration
import CoreMetrics
import Logging
import Scoped
import ScopedServiceLifecycle
import ServiceLifecycle
import Synchronization
import SystemPackage

/// How many reloads the server applied and rejected since it started, for `/debug/stats`.
struct ReloadCounts: Codable, Equatable, Sendable {
    var applied = 0
    var rejected = 0
}

/// Counts reloads as they are applied and rejected.
final class ReloadLedger: Sendable {
    private let state = Mutex(ReloadCounts())

    var counts: ReloadCounts { state.withLock { $0 } }

    func record(applied: Bool) {
        state.withLock { counts in
            if applied { counts.applied += 1 } else { counts.rejected += 1 }
        }
    }
}

/// The example server's configuration while it runs: its files, watched by swift-configuration's
/// reloading provider (checked every second, and at once on SIGHUP), and the tenants' files of
/// `Config/tenants/` (checked every second), and each change applied as a new root generation
/// by the root's service.
///
/// A change is rejected, with a log line naming the file, the key and the reason, and the
/// current root keeps serving, when a file does not parse, a value is invalid, a key that only
/// a restart can apply changed (`http.host`, `http.port`, `http.idleTimeout`, `debug.routes`,
/// `metrics.enabled`, the `otel` section), or the new root fails validation.
final class LiveConfiguration: Service, Sendable {
    private let started: AppConfiguration
    private let environment: [String: String]
    private let files: ConfigurationFiles
    private let profile: ReloadingFileProvider<JSONSnapshot>
    private let overlay: ReloadingFileProvider<JSONSnapshot>?
    private let rootService: ScopeRootService
    private let makeRoot: @Sendable (AppConfiguration) throws -> ScopeRoot
    private let reloads: ReloadLedger
    private let logger: Logger
    /// The parse failure last reported per file, so that a file broken once is reported once,
    /// not at every check until it is fixed.
    private let reportedFailures = SharedState<[String: String]>([:])
    /// The configuration of the root being reloaded to, applied to what lives outside the root
    /// (the log level) once the reload is.
    private let pending = SharedState<AppConfiguration?>(nil)

    /// How often the files are checked for a change.
    static let pollInterval = Duration.seconds(1)

    init(
        started: AppConfiguration,
        environment: [String: String],
        rootService: ScopeRootService,
        makeRoot: @escaping @Sendable (AppConfiguration) throws -> ScopeRoot,
        reloads: ReloadLedger,
        logger: Logger
    ) async throws {
        self.started = started
        self.environment = environment
        self.rootService = rootService
        self.makeRoot = makeRoot
        self.reloads = reloads
        self.logger = logger
        let files = try ConfigurationFiles(environment: environment)
        self.files = files
        let failures = reportedFailures
        let report: @Sendable (String, String) -> Void = { file, error in
            let isNew = failures.withLock { reported in
                defer { reported[file] = error }
                return reported[file] != error
            }
            guard isNew else { return }
            reloads.record(applied: false)
            Counter(label: "scoped_reloads_total", dimensions: [("outcome", "rejected")]).increment()
            logger.error(
                "Configuration reload rejected: (file) in \(file): the file is not valid JSON: \(error); the current configuration keeps serving"
            )
        }
        func provider(_ file: String) async throws -> ReloadingFileProvider<JSONSnapshot> {
            try await ReloadingFileProvider<JSONSnapshot>(
                filePath: .init(file),
                pollInterval: Self.pollInterval,
                logger: Logger(label: "configuration") { _ in FailedReloadLogHandler(file: file, report: report) }
            )
        }
        self.profile = try await provider(files.profile)
        var overlay: ReloadingFileProvider<JSONSnapshot>?
        if let overlayFile = files.overlay { overlay = try await provider(overlayFile) }
        self.overlay = overlay
    }

    /// Watches the files and applies each change, until graceful shutdown.
    func run() async throws {
        let (changes, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        try await withThrowingDiscardingTaskGroup { group in
            for provider in [profile] + (overlay.map { [$0] } ?? []) {
                group.addTask { try await provider.run() }
                group.addTask {
                    try await provider.watchSnapshot { snapshots in
                        // The first snapshot is the one the server started with.
                        for await _ in snapshots.dropFirst() { continuation.yield() }
                    }
                }
            }
            // The tenants' files: a file added, changed or removed is a change like the others.
            // (It reloads the root, and so reopens every tenant on its next request, with the
            // same data; only the changed tenant's settings differ.)
            group.addTask { [files] in
                var last = TenantOverlay.signature(of: files.tenantsFolder)
                while !Task.isCancelled {
                    // Cancelled at graceful shutdown: the loop ends, and the group with it, cleanly.
                    try? await Task.sleep(for: Self.pollInterval)
                    guard !Task.isCancelled else { return }
                    let now = TenantOverlay.signature(of: files.tenantsFolder)
                    if now != last {
                        last = now
                        continuation.yield()
                    }
                }
            }
            try await rootService.follow(
                changes.cancelOnGracefulShutdown().map { [self] in configuration() },
                makeRoot: { [makeRoot, pending] snapshot in
                    let configuration = try snapshot.get()
                    pending.withLock { $0 = configuration }
                    return try makeRoot(configuration)
                },
                onReload: report
            )
            group.cancelAll()
        }
    }

    /// The configuration the files hold now, or why it cannot be applied.
    private func configuration() -> Result<AppConfiguration, ConfigurationError> {
        Result {
            let configuration = try AppConfiguration.read(
                files: files,
                profile: profile,
                overlay: overlay,
                environment: environment
            )
            try checkRestartOnlyKeys(of: configuration)
            return configuration
        }
        .mapError {
            $0 as? ConfigurationError ?? ConfigurationError(key: "(file)", source: files.profile, message: "\($0)")
        }
    }

    /// Throws for a key whose change only a restart can apply: it is rejected whole, not half-applied.
    private func checkRestartOnlyKeys(of configuration: AppConfiguration) throws {
        let restartOnly: [(key: String, changed: Bool)] = [
            ("http.host", configuration.listenAddress != started.listenAddress),
            ("http.idleTimeout", configuration.idleTimeout != started.idleTimeout),
            ("debug.routes", configuration.debugRoutes != started.debugRoutes),
            ("metrics.enabled", configuration.metricsEnabled != started.metricsEnabled),
            // The exporters are the process's tracing and metrics backends, bootstrapped once.
            ("otel", configuration.otlp != started.otlp),
        ]
        guard let changed = restartOnly.first(where: \.changed) else { return }
        let key = changed.key == "http.host" ? "http.host/http.port" : changed.key
        throw ConfigurationError(
            key: key,
            source: files.overlay ?? files.profile,
            message: "needs a restart; the server keeps \(started.listenAddress) and its current settings"
        )
    }

    private func report(_ outcome: Result<ScopeReload, any Error>) async {
        switch outcome {
        case .success(let reload):
            reloads.record(applied: true)
            if let level = pending.withLock({ $0?.logLevel }) { LiveLogLevel.shared.level = level }
            logger.notice("Configuration reloaded, generation \(reload.generation): \(reload.summary)")
        case .failure(let error):
            reloads.record(applied: false)
            logger.error("Configuration reload rejected: \(error); the current configuration keeps serving")
        }
    }
}

/// Receives what a reloading file provider logs, and reports the one line that says its file
/// failed to load: the provider keeps its previous contents and logs it only at debug level.
private struct FailedReloadLogHandler: LogHandler {
    let file: String
    let report: @Sendable (_ file: String, _ error: String) -> Void
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .debug

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        guard event.message.description.hasPrefix("Reload check failed") else { return }
        report(file, event.metadata?["error"]?.description ?? "\(event.message)")
    }
}

/// A value under a lock, shared by reference with the closures that update it.
private final class SharedState<Value: Sendable>: Sendable {
    private let value: Mutex<Value>

    init(_ value: Value) { self.value = Mutex(value) }

    func withLock<R>(_ body: (inout Value) -> R) -> R { value.withLock { body(&$0) } }
}
