public import Configuration
import CoreMetrics
import Foundation
public import Logging
import PostgresNIO
public import ServiceLifecycle
import Synchronization

/// Settings kept in a PostgreSQL table, for swift-configuration: every instance of a service
/// on one database reads the same settings, and applies a change within a second of its commit.
///
/// A change is one transaction that writes settings and increments a version, with the SQL
/// functions the provider creates (`scoped_set_setting('log.level', '"debug"')`,
/// `scoped_unset_setting('log.level')`: see <doc:SharedSettings>). The provider reads each
/// version whole, in one statement, so a change of several keys is seen all at once or not at
/// all. It learns of a version from a notification on the channel `scoped_settings`, sent at
/// commit, and, as the fallback for a notification lost while its connection was down, by
/// reading again every `pollInterval`. It reconnects with backoff and, while the database is
/// unreachable, keeps the last version it read.
///
/// Put it among a `ConfigReader`'s providers, at the precedence you choose, and run it as a
/// `Service`; watch its snapshots to reload (see `ReloadableScopeRoot.follow`):
///
/// ```swift
/// let settings = PostgresSettingsProvider(
///     configuration: postgres,
///     keys: ["log.level": .string, "catalog.repository": .string],
///     logger: logger
/// )
/// try await settings.load()  // the current version, before the first root is made
/// let reader = ConfigReader(providers: [EnvironmentVariablesProvider(), settings, profileFile])
/// ```
///
/// Nothing runs per request: a request reads the root its configuration built.
public final class PostgresSettingsProvider: Sendable {
    private struct State {
        var snapshot: PostgresSettingsSnapshot
        var status: PostgresListenerStatus
        var watchers: [Int: AsyncStream<any ConfigSnapshot>.Continuation] = [:]
        var nextWatcher = 0
        var isPrepared = false
    }

    /// The database and how to reach it (its migrations are not applied here).
    public let configuration: PostgresConfiguration
    /// The keys an operator may set, with their types.
    public let keys: [String: PostgresSettingType]
    /// How often the version is read when no notification came.
    public let pollInterval: Duration
    private let logger: Logger
    private let state: Mutex<State>

    /// A provider of the settings kept in `configuration`'s database, empty until it has read
    /// them (``load()`` or ``run()``).
    ///
    /// - Parameters:
    ///   - configuration: the database; the provider uses a connection of its own, outside any
    ///     client's pool, and gives up a read after the configuration's `statementTimeout`.
    ///   - keys: the keys the SQL functions accept, with the JSON type each must have; registered
    ///     (or their types changed) each time the provider prepares the database.
    ///   - pollInterval: how often to read when no notification came: how late a change can be
    ///     at worst, when its notification was lost.
    ///   - logger: where versions read and connections lost are logged.
    public init(
        configuration: PostgresConfiguration,
        keys: [String: PostgresSettingType],
        pollInterval: Duration = .seconds(5),
        logger: Logger
    ) {
        self.configuration = configuration
        self.keys = keys
        self.pollInterval = pollInterval
        self.logger = logger
        state = Mutex(
            State(
                snapshot: .empty,
                status: PostgresListenerStatus(version: 0, source: .poll, lastHeard: nil, isListening: false)
            )
        )
    }

    /// The version read last; read many keys through it to read them from one version.
    public var currentSnapshot: PostgresSettingsSnapshot { state.withLock { $0.snapshot } }

    /// The version served, how it was read, and whether the provider is listening.
    public var status: PostgresListenerStatus { state.withLock { $0.status } }

    /// Creates the tables and functions if they do not exist, registers ``keys``, and reads the
    /// current version: what start-up does before it reads its configuration.
    ///
    /// - Throws: ``PostgresStartupError`` when the database cannot be reached within its
    ///   `connectTimeout`, or the schema cannot be created.
    public func load() async throws {
        try await follower.readOnce("settings") { connection in
            try await prepare(connection)
            try await read(on: connection, trigger: .poll)
        }
    }

    /// What reads the database: once at start-up, then on each notification and poll.
    private var follower: PostgresChannelFollower {
        PostgresChannelFollower(
            configuration: configuration,
            channel: PostgresSettingsSchema.channel,
            pollInterval: pollInterval,
            readTimeout: configuration.statementTimeout,
            logger: logger,
            listening: { [weak self] in self?.setListening($0) }
        )
    }

    /// Creates the schema and registers the keys, once per provider.
    private func prepare(_ connection: PostgresConnection) async throws {
        guard !state.withLock({ $0.isPrepared }) else { return }
        let register = PostgresSettingsSchema.registering(keys, in: "scoped_setting_keys").map { [$0] } ?? []
        try await PostgresSettingsSchema.apply(
            PostgresSettingsSchema.valueChecks + PostgresSettingsSchema.statements + register,
            on: connection,
            logger: logger
        )
        state.withLock { $0.isPrepared = true }
    }

    /// Reads the current version and, when it is newer than the one served, makes it current
    /// and tells the watchers.
    private func read(on connection: PostgresConnection, trigger: PostgresChannelFollower.Trigger) async throws {
        let rows = try await connection.query(PostgresQuery(unsafeSQL: PostgresSettingsSchema.read), logger: logger)
        var read: (version: Int64, json: String)?
        for try await (version, json) in rows.decode((Int64, String).self) { read = (version, json) }
        guard let read else { throw PostgresSettingsError.noVersionRow }
        let source: PostgresListenerStatus.Source = trigger == .notification ? .notify : .poll
        let now = Date()
        let isNewer = state.withLock { state in
            state.status.lastHeard = now
            return read.version > state.snapshot.version
        }
        guard isNewer else { return }
        let snapshot: PostgresSettingsSnapshot
        do {
            snapshot = try PostgresSettingsSnapshot(version: read.version, json: read.json)
        } catch {
            logger.error("Settings version \(read.version) cannot be read, and is skipped: \(error)")
            return
        }
        // A notification and a poll can read at once: the newer version wins, whichever ends first.
        let watchers = state.withLock { state -> [AsyncStream<any ConfigSnapshot>.Continuation]? in
            guard snapshot.version > state.snapshot.version else { return nil }
            state.snapshot = snapshot
            state.status.version = snapshot.version
            state.status.source = source
            return Array(state.watchers.values)
        }
        guard let watchers else { return }
        Counter(label: "scoped_settings_versions_read_total", dimensions: [("source", source.rawValue)]).increment()
        logger.info("Read settings version \(snapshot.version) (\(source.rawValue))")
        for watcher in watchers { watcher.yield(snapshot) }
    }

    private func setListening(_ isListening: Bool) {
        let changed = state.withLock { state in
            defer { state.status.isListening = isListening }
            return state.status.isListening != isListening
        }
        guard changed else { return }
        Gauge(label: "scoped_settings_listening").record(isListening ? 1 : 0)
    }
}

extension PostgresSettingsProvider: Service {
    /// Listens for changes and polls, reconnecting when the connection is lost, until the task
    /// is cancelled or the service group shuts down gracefully; prepares the database first if
    /// ``load()`` did not.
    public func run() async throws {
        await follower.runUntilShutdown { [self] connection, trigger in
            try await prepare(connection)
            try await read(on: connection, trigger: trigger)
        }
        // Watchers' sequences end with the provider's run.
        let watchers = state.withLock { state in
            defer { state.watchers = [:] }
            return Array(state.watchers.values)
        }
        for watcher in watchers { watcher.finish() }
    }
}

extension PostgresSettingsProvider: ConfigProvider {
    /// `PostgreSQL settings`.
    public var providerName: String { "PostgreSQL settings" }

    /// The value `key` has in the version read last.
    public func value(forKey key: AbsoluteConfigKey, type: ConfigType) throws -> LookupResult {
        try currentSnapshot.value(forKey: key, type: type)
    }

    /// The value `key` has in the version read last (this does not query the database).
    public func fetchValue(forKey key: AbsoluteConfigKey, type: ConfigType) async throws -> LookupResult {
        try currentSnapshot.value(forKey: key, type: type)
    }

    /// The value `key` has now, and again each time a version is read.
    public func watchValue<Return: ~Copyable>(
        forKey key: AbsoluteConfigKey,
        type: ConfigType,
        updatesHandler: (ConfigUpdatesAsyncSequence<Result<LookupResult, any Error>, Never>) async throws -> Return
    ) async throws -> Return {
        try await watchSnapshot { snapshots in
            try await updatesHandler(
                ConfigUpdatesAsyncSequence(
                    snapshots.map { snapshot in Result { try snapshot.value(forKey: key, type: type) } }
                )
            )
        }
    }

    /// The version read last.
    public func snapshot() -> any ConfigSnapshot { currentSnapshot }

    /// The version read last, then each newer version as it is read, until ``run()`` ends.
    public func watchSnapshot<Return: ~Copyable>(
        updatesHandler: (ConfigUpdatesAsyncSequence<any ConfigSnapshot, Never>) async throws -> Return
    ) async throws -> Return {
        let (stream, continuation) = AsyncStream<any ConfigSnapshot>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = state.withLock { state in
            defer { state.nextWatcher += 1 }
            state.watchers[state.nextWatcher] = continuation
            continuation.yield(state.snapshot)
            return state.nextWatcher
        }
        defer { _ = state.withLock { $0.watchers.removeValue(forKey: id) } }
        return try await updatesHandler(ConfigUpdatesAsyncSequence(stream))
    }
}

/// What a settings table held that the provider could not read.
enum PostgresSettingsError: Error, CustomStringConvertible {
    case noVersionRow

    var description: String { "scoped_settings_version has no row (was it emptied by hand?)" }
}
