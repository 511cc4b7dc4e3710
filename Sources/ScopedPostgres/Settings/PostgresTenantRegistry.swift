import Foundation
public import Logging
import PostgresNIO
public import Scoped
public import ServiceLifecycle
import Synchronization

/// Tenants kept in PostgreSQL: each tenant's state and settings, the same on every instance of
/// a service, and each change told to every instance within a second of its commit.
///
/// An operator changes a tenant with one SQL statement (see <doc:SharedSettings>):
/// `scoped_set_tenant_state('acme', 'suspended')`, `scoped_set_tenant_setting('acme',
/// 'catalog.repository', '"fixture"')`. Each instance learns of it as it learns of a change of
/// settings (``PostgresSettingsProvider``): notified at commit, and reading every
/// `pollInterval` for a notification it missed.
///
/// What a change means is the application's: read ``tenant(_:)`` where the root's
/// `Tenancy.configure` opens a tenant (refusing one that is suspended or deleted), and evict
/// each changed tenant with `ScopeRoot.evictTenant(_:)` as changes arrive, so that its next
/// request opens it with its new state and settings:
///
/// ```swift
/// try await registry.watchChanges { changes in
///     for await tenants in changes {
///         for tenant in tenants { await root.evictTenant(tenant.id) }
///     }
/// }
/// ```
///
/// Nothing runs per request: the state is read when a tenant opens.
public final class PostgresTenantRegistry: Sendable {
    /// What a tenant may do.
    public enum State: String, Sendable, Hashable, Codable, CaseIterable {
        /// Served.
        case active
        /// Refused for now (403 is the usual answer); its data is kept.
        case suspended
        /// Refused for good (404, as a tenant that never existed).
        case deleted
    }

    /// A tenant as the registry holds it.
    public struct Tenant: Sendable {
        /// Its ID.
        public let id: TenantID
        /// What it may do.
        public let state: State
        /// Its settings, over the application's: readable as a configuration provider, named
        /// `PostgreSQL settings of tenant <id>, version <n>` in error messages.
        public let settings: PostgresSettingsSnapshot
    }

    private struct Registry {
        var tenants: [TenantID: Tenant] = [:]
        var status = PostgresListenerStatus(version: 0, source: .poll, lastHeard: nil, isListening: false)
        var watchers: [Int: AsyncStream<[Tenant]>.Continuation] = [:]
        var nextWatcher = 0
        var isPrepared = false
    }

    /// The database and how to reach it.
    public let configuration: PostgresConfiguration
    /// The keys of a tenant's settings an operator may set, with their types.
    public let settingKeys: [String: PostgresSettingType]
    /// How often the registry is read when no notification came.
    public let pollInterval: Duration
    private let logger: Logger
    private let registry = Mutex(Registry())

    /// A registry of the tenants kept in `configuration`'s database, empty until it has read
    /// them (``load()`` or ``run()``).
    ///
    /// - Parameters:
    ///   - configuration: the database; the registry uses a connection of its own.
    ///   - settingKeys: the keys `scoped_set_tenant_setting` accepts, with their JSON types.
    ///   - pollInterval: how often to read when no notification came.
    ///   - logger: where changes read and connections lost are logged.
    public init(
        configuration: PostgresConfiguration,
        settingKeys: [String: PostgresSettingType],
        pollInterval: Duration = .seconds(5),
        logger: Logger
    ) {
        self.configuration = configuration
        self.settingKeys = settingKeys
        self.pollInterval = pollInterval
        self.logger = logger
    }

    /// The tenant `id`, or `nil` when the registry does not know it.
    public func tenant(_ id: TenantID) -> Tenant? { registry.withLock { $0.tenants[id] } }

    /// Every tenant the registry knows, deleted ones included.
    public var tenants: [Tenant] { registry.withLock { Array($0.tenants.values) } }

    /// The version read last, how it was read, and whether the registry is listening.
    public var status: PostgresListenerStatus { registry.withLock { $0.status } }

    /// Creates the tables and functions if they do not exist, registers ``settingKeys``, and
    /// reads every tenant: what start-up does before it serves.
    ///
    /// - Throws: ``PostgresStartupError`` when the database cannot be reached within its
    ///   `connectTimeout`, or the schema cannot be created.
    public func load() async throws {
        try await follower.readOnce("tenants") { connection in
            try await prepare(connection)
            try await read(on: connection, trigger: .poll)
        }
    }

    /// What reads the database: once at start-up, then on each notification and poll.
    private var follower: PostgresChannelFollower {
        PostgresChannelFollower(
            configuration: configuration,
            channel: PostgresSettingsSchema.tenantsChannel,
            pollInterval: pollInterval,
            readTimeout: configuration.statementTimeout,
            logger: logger,
            listening: { [weak self] in self?.setListening($0) }
        )
    }

    /// Runs `handler` with the tenants each read found changed, newest last, until ``run()``
    /// ends; the tenants read before the call are not in it.
    public func watchChanges<Return>(
        _ handler: (AsyncStream<[Tenant]>) async throws -> Return
    ) async rethrows -> Return {
        let (stream, continuation) = AsyncStream<[Tenant]>.makeStream()
        let id = registry.withLock { registry in
            defer { registry.nextWatcher += 1 }
            registry.watchers[registry.nextWatcher] = continuation
            return registry.nextWatcher
        }
        defer { _ = registry.withLock { $0.watchers.removeValue(forKey: id) } }
        return try await handler(stream)
    }

    private func prepare(_ connection: PostgresConnection) async throws {
        guard !registry.withLock({ $0.isPrepared }) else { return }
        let register =
            PostgresSettingsSchema.registering(settingKeys, in: "scoped_tenant_setting_keys").map { [$0] } ?? []
        try await PostgresSettingsSchema.apply(
            PostgresSettingsSchema.valueChecks + PostgresSettingsSchema.tenantStatements + register,
            on: connection,
            logger: logger
        )
        registry.withLock { $0.isPrepared = true }
    }

    /// Reads the tenants changed since the version read last, and tells the watchers.
    private func read(on connection: PostgresConnection, trigger: PostgresChannelFollower.Trigger) async throws {
        let since = registry.withLock { $0.status.version }
        let rows = try await connection.query(
            PostgresQuery(unsafeSQL: PostgresSettingsSchema.readTenants, binds: try Self.binds(since)),
            logger: logger
        )
        var version: Int64?
        var changed: [Tenant] = []
        for try await (read, id, state, settings) in rows.decode((Int64, String?, String?, String?).self) {
            version = read
            guard let id, let state, let settings else { continue }
            guard let tenantID = TenantID(id), let tenantState = State(rawValue: state) else {
                logger.error("Tenant row '\(id)' (\(state)) cannot be read, and is skipped")
                continue
            }
            do {
                let snapshot = try PostgresSettingsSnapshot(
                    version: read,
                    json: settings,
                    name: "PostgreSQL settings of tenant \(id), version \(read)"
                )
                changed.append(Tenant(id: tenantID, state: tenantState, settings: snapshot))
            } catch {
                logger.error("The settings of tenant \(id) cannot be read, and are skipped: \(error)")
            }
        }
        guard let version else { throw PostgresSettingsError.noVersionRow }
        let source: PostgresListenerStatus.Source = trigger == .notification ? .notify : .poll
        let now = Date()
        // A notification and a poll can read at once: each applies only what is newer than the
        // version read last, and the later of them finds nothing.
        let watchers = registry.withLock { registry -> [AsyncStream<[Tenant]>.Continuation]? in
            registry.status.lastHeard = now
            guard version > registry.status.version else { return nil }
            registry.status.version = version
            registry.status.source = source
            for tenant in changed { registry.tenants[tenant.id] = tenant }
            return Array(registry.watchers.values)
        }
        guard let watchers, !changed.isEmpty else { return }
        for tenant in changed {
            logger.notice("Tenant \(tenant.id) is \(tenant.state.rawValue) (version \(version), \(source.rawValue))")
        }
        for watcher in watchers { watcher.yield(changed) }
    }

    private static func binds(_ version: Int64) throws -> PostgresBindings {
        var binds = PostgresBindings()
        binds.append(version)
        return binds
    }

    private func setListening(_ isListening: Bool) {
        registry.withLock { $0.status.isListening = isListening }
    }
}

extension PostgresTenantRegistry: Service {
    /// Listens for changes and polls, reconnecting when the connection is lost, until the task
    /// is cancelled or the service group shuts down gracefully.
    public func run() async throws {
        await follower.runUntilShutdown { [self] connection, trigger in
            try await prepare(connection)
            try await read(on: connection, trigger: trigger)
        }
        let watchers = registry.withLock { registry in
            defer { registry.watchers = [:] }
            return Array(registry.watchers.values)
        }
        for watcher in watchers { watcher.finish() }
    }
}
