import Foundation
import Logging
import PostgresNIO
import Scoped
import ScopedReload
import ScopedPostgres

/// The tenants that have a database: what the history job prunes, tenant by tenant.
enum KnownTenants {
    /// On SQLite, the tenants with a file in `directory`; on PostgreSQL, the tenants with a
    /// schema (`t_<id>`), read through the application's client on `root`.
    static func list(
        _ kind: AppConfiguration.DatabaseKind,
        directory: String,
        root: ReloadableScopeRoot
    ) async throws -> [TenantID] {
        switch kind {
        case .sqlite:
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            return names.filter { $0.hasSuffix(".sqlite") }
                .compactMap { TenantID(String($0.dropLast(".sqlite".count))) }
                .sorted()
        case .postgres:
            let client = try await root.withScope { try await ScopedValues.current.service(PostgresClientKey.self) }
            var tenants: [TenantID] = []
            let rows = try await client.query(
                "SELECT nspname FROM pg_namespace WHERE nspname LIKE 't\\_%'",
                logger: Logger(label: "catalog.tenants", factory: { _ in SwiftLogNoOpLogHandler() })
            )
            for try await name in rows.decode(String.self) {
                if let tenant = TenantID(String(name.dropFirst(2))) { tenants.append(tenant) }
            }
            return tenants.sorted()
        }
    }
}
