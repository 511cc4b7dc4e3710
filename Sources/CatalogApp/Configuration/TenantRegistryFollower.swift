import Configuration
import CoreMetrics
import HTTPTypes
import Logging
import MovieCatalog
import Scoped
import ScopedDiagnostics
import ScopedReload
import ScopedPostgres
import ScopedSQLite
import ScopedTenants
import ServiceLifecycle
import Synchronization

/// The tenants this instance serves, as the registry in PostgreSQL holds them and this instance
/// accepted them: what the tenancy reads when a tenant opens (never per request).
///
/// A tenant's settings that this instance cannot apply (`database.readers` 0) are rejected,
/// naming the key, and the tenant keeps the state and settings accepted before.
final class AcceptedTenants: Sendable {
    struct Tenant: Sendable, Equatable {
        var state: PostgresTenantRegistry.State
        var overlay: TenantOverlay
    }

    private let accepted: Mutex<[TenantID: Tenant]>
    /// Changes of a tenant rejected since start-up.
    private let rejections = Atomic(0)

    /// The tenants `registry` read at start-up.
    ///
    /// - Throws: ``ConfigurationError`` for the first tenant whose settings are invalid: the
    ///   server does not start on them.
    init(_ registry: PostgresTenantRegistry) throws {
        var accepted: [TenantID: Tenant] = [:]
        for tenant in registry.tenants { accepted[tenant.id] = try Self.accept(tenant) }
        self.accepted = Mutex(accepted)
    }

    var rejected: Int { rejections.load(ordering: .relaxed) }

    /// Takes `tenant`'s new state and settings, when they are valid.
    ///
    /// - Returns: whether they were taken (the tenant is then to be evicted), or the error that
    ///   rejected them.
    func take(_ tenant: PostgresTenantRegistry.Tenant) -> Result<Void, ConfigurationError> {
        do {
            let new = try Self.accept(tenant)
            accepted.withLock { $0[tenant.id] = new }
            return .success(())
        } catch {
            rejections.add(1, ordering: .relaxed)
            return .failure(error)
        }
    }

    /// The settings a tenant opens with.
    ///
    /// - Throws: ``APIError`` `404 unknown_tenant` for a tenant the registry does not have or
    ///   has deleted, `403 tenant_suspended` for one it has suspended.
    func overlay(of id: TenantID) throws -> TenantOverlay {
        guard let tenant = accepted.withLock({ $0[id] }), tenant.state != .deleted else { throw Self.unknown(id) }
        guard tenant.state == .active else {
            throw APIError(
                status: .forbidden,
                code: "tenant_suspended",
                message: "Tenant \(id) is suspended.",
                field: "X-Tenant"
            )
        }
        return tenant.overlay
    }

    /// `404 unknown_tenant`.
    static func unknown(_ id: TenantID) -> APIError {
        APIError(status: .notFound, code: "unknown_tenant", message: "There is no tenant \(id).", field: "X-Tenant")
    }

    /// `tenant` as this instance serves it, its settings checked as a tenant file's are.
    private static func accept(_ tenant: PostgresTenantRegistry.Tenant) throws(ConfigurationError) -> Tenant {
        let source = tenant.settings.description
        let values = ConfigValues(reader: ConfigReader(provider: tenant.settings), file: source, environment: [:])
        var overlay = TenantOverlay(file: source)
        do {
            if let variant = try values.optionalString("catalog.repository") {
                let known = CatalogVariants.make().names(of: CatalogVariants.entry)
                guard known.contains(variant) else {
                    throw values.error("catalog.repository", "expected one of: \(known.joined(separator: ", "))")
                }
                // The registry is PostgreSQL's: `sqlite`, the database's repository, is `postgres`,
                // as at the root.
                overlay.repositoryVariant = AppConfiguration.DatabaseKind.postgres.repositoryVariant(named: variant)
            }
            if values.isPresent("database.readers") { overlay.readers = try values.int("database.readers", in: 1...64) }
            if let text = try values.optionalString("database.synchronous") {
                guard let synchronous = SQLiteConfiguration.Synchronous(rawValue: text.uppercased()) else {
                    throw values.error("database.synchronous", "expected one of: off, normal, full, extra")
                }
                overlay.synchronous = synchronous
            }
        } catch let error as ConfigurationError {
            throw error
        } catch {
            throw ConfigurationError(key: "(tenant)", source: source, message: "\(error)")
        }
        return Tenant(state: tenant.state, overlay: overlay)
    }
}

/// Follows the tenant registry in PostgreSQL (`tenants.fromDatabase`): each tenant whose state
/// or settings changed is evicted from the current root, so that its next request opens it as
/// it is now (or is refused); its requests in flight and work handed off finish first.
struct TenantRegistryFollower: Service {
    let registry: PostgresTenantRegistry
    let accepted: AcceptedTenants
    let root: ReloadableScopeRoot
    let logger: Logger

    /// The keys of a tenant's settings the registry accepts: those of a tenant's file.
    static let settingKeys: [String: PostgresSettingType] = [
        "catalog.repository": .string,
        "database.readers": .integer,
        "database.synchronous": .string,
    ]

    func run() async throws {
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { try await registry.run() }
            await registry.watchChanges { changes in
                for await tenants in changes {
                    for tenant in tenants {
                        switch accepted.take(tenant) {
                        case .success:
                            Counter(label: "scoped_tenant_changes_total", dimensions: [("outcome", "applied")])
                                .increment()
                            // Each drain in a task of its own: a tenant's long request does not hold up
                            // the next change.
                            group.addTask {
                                await root.current.evictTenant(tenant.id)
                                logger.notice(
                                    "Tenant \(tenant.id) is \(tenant.state.rawValue); its services are closed"
                                )
                            }
                        case .failure(let error):
                            Counter(label: "scoped_tenant_changes_total", dimensions: [("outcome", "rejected")])
                                .increment()
                            logger.error(
                                "Tenant change rejected: \(error); tenant \(tenant.id) keeps its current settings"
                            )
                        }
                    }
                }
            }
        }
    }
}
