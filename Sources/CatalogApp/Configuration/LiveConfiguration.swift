import Configuration
import Foundation
import CoreMetrics
import Logging
import Scoped
import ScopedReload
import ScopedPostgres
import ScopedServiceLifecycle
import ServiceLifecycle
import Synchronization
import SystemPackage

/// How many reloads the server applied and rejected since it started, for `/debug/stats`.
struct ReloadCounts: Codable, Equatable, Sendable {
    var applied = 0
    var rejected = 0
}

/// Which version of the settings kept in the database the server serves, for `/debug/stats`.
struct SettingsStatus: Codable, Equatable, Sendable {
    /// The version the current root was built from.
    var version: Int64
    /// How that version was read: `notify` or `poll`.
    var source: PostgresListenerStatus.Source
    /// When the database last answered a read, in ISO 8601, or `nil` before the first.
    var lastHeard: String?
    /// Whether the listening connection is up.
    var listening: Bool
    /// The newest version read, when it was rejected (it is not served).
    var rejectedVersion: Int64?
}

/// What the tenant registry in PostgreSQL has told this instance, for `/debug/stats`.
struct TenantRegistryStatus: Codable, Equatable, Sendable {
    /// The registry's version read last.
    var version: Int64
    /// How it was read: `notify` or `poll`.
    var source: PostgresListenerStatus.Source
    /// When the database last answered a read, in ISO 8601.
    var lastHeard: String?
    /// Whether the listening connection is up.
    var listening: Bool
    /// Changes of a tenant this instance rejected since start-up.
    var rejected: Int
}

/// Counts reloads as they are applied and rejected, and the version of the database's settings
/// served, when there are some.
final class ReloadLedger: Sendable {
    private struct State {
        var counts = ReloadCounts()
        var settingsServed: (version: Int64, source: PostgresListenerStatus.Source)?
        var settingsRejected: Int64?
    }
    private let state: Mutex<State>
    private let settings: PostgresSettingsProvider?
    private let tenantRegistry: (registry: PostgresTenantRegistry, accepted: AcceptedTenants)?

    /// A ledger; with `settings`, of the configuration read at `settingsVersion` of them.
    init(
        settings: PostgresSettingsProvider? = nil,
        settingsVersion: Int64 = 0,
        tenantRegistry: (registry: PostgresTenantRegistry, accepted: AcceptedTenants)? = nil
    ) {
        self.settings = settings
        self.tenantRegistry = tenantRegistry
        state = Mutex(State(settingsServed: settings.map { (settingsVersion, $0.status.source) }))
    }

    var counts: ReloadCounts { state.withLock { $0.counts } }

    /// The settings served, and when the database last answered; `nil` without database settings.
    var settingsStatus: SettingsStatus? {
        guard let settings else { return nil }
        let status = settings.status
        return state.withLock { state in
            state.settingsServed.map {
                SettingsStatus(
                    version: $0.version,
                    source: $0.source,
                    lastHeard: status.lastHeard?.formatted(.iso8601),
                    listening: status.isListening,
                    rejectedVersion: state.settingsRejected
                )
            }
        }
    }

    /// The tenant registry's status; `nil` without one.
    var tenantRegistryStatus: TenantRegistryStatus? {
        guard let (registry, accepted) = tenantRegistry else { return nil }
        let status = registry.status
        return TenantRegistryStatus(
            version: status.version,
            source: status.source,
            lastHeard: status.lastHeard?.formatted(.iso8601),
            listening: status.isListening,
            rejected: accepted.rejected
        )
    }

    func record(applied: Bool) {
        state.withLock { state in
            if applied { state.counts.applied += 1 } else { state.counts.rejected += 1 }
        }
    }

    /// Records the version of the database's settings a reload applied or rejected.
    ///
    /// - Returns: whether it is a version not recorded before, for a log line and a metric once.
    func record(settingsVersion version: Int64, applied: Bool) -> Bool {
        let source = settings?.status.source ?? .poll
        return state.withLock { state in
            guard let served = state.settingsServed, version != served.version else { return false }
            if applied {
                state.settingsServed = (version, source)
                state.settingsRejected = nil
                return true
            }
            defer { state.settingsRejected = version }
            return state.settingsRejected != version
        }
    }
}

/// The example server's configuration while it runs: its files, watched by swift-configuration's
/// reloading provider (checked every second, and at once on SIGHUP), the tenants' files of
/// `Config/tenants/` (checked every second), and with `settings.fromDatabase` the settings kept
/// in PostgreSQL (notified at each commit, read at `settings.pollInterval` otherwise), and each
/// change applied as a new root generation by the root's service.
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
    /// The version of the database's settings the change being applied was read at: changes
    /// are read and applied one at a time, in order.
    private let attemptedSettings = SharedState<Int64?>(nil)

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
            // The database's settings: each version read is a change like the others.
            if let settings = started.databaseSettings?.provider {
                group.addTask { try await settings.run() }
                group.addTask {
                    try await settings.watchSnapshot { versions in
                        for await _ in versions.dropFirst() { continuation.yield() }
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

    /// The configuration the files and the database's settings hold now, or why it cannot be
    /// applied.
    private func configuration() -> Result<AppConfiguration, ConfigurationError> {
        // One version of the database's settings for the whole read.
        let settings = started.databaseSettings?.provider?.currentSnapshot
        attemptedSettings.withLock { $0 = settings?.version }
        return Result {
            var configuration = try AppConfiguration.read(
                files: files,
                profile: profile,
                overlay: overlay,
                environment: environment,
                settings: settings
            )
            try checkRestartOnlyKeys(of: configuration)
            if let settings {
                configuration.databaseSettings = started.databaseSettings
                configuration.databaseSettings?.version = settings.version
            }
            // The registry started with the server: its tenants, not the files', are served.
            configuration.tenantRegistry = started.tenantRegistry
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
            var settings = ""
            if let version = attemptedSettings.withLock({ $0 }) {
                settings = ", settings version \(version)"
                if reloads.record(settingsVersion: version, applied: true) {
                    Counter(label: "scoped_settings_versions_total", dimensions: [("outcome", "applied")]).increment()
                }
            }
            logger.notice("Configuration reloaded, generation \(reload.generation)\(settings): \(reload.summary)")
        case .failure(let error):
            reloads.record(applied: false)
            if let version = attemptedSettings.withLock({ $0 }),
                reloads.record(settingsVersion: version, applied: false)
            {
                Counter(label: "scoped_settings_versions_total", dimensions: [("outcome", "rejected")]).increment()
            }
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
