import Foundation
import HTTPTypes
import MovieCatalog
import Scoped
import ScopedDiagnostics
import ScopedSQLite
import ScopedTenants

/// The `tenants` section: where each tenant's SQLite file goes, how many tenants stay open and
/// for how long, and each tenant's own settings from `Config/tenants/<id>.json`.
///
/// On PostgreSQL each tenant has a schema of its own instead of a file
/// (`PostgresTenantDatabaseKey`); `tenants.directory` is then not used.
///
/// `TENANTS_DIRECTORY`, `TENANTS_MAX` and `TENANTS_IDLE_TIMEOUT` override the section's keys, as
/// the other sections' variables do.
struct TenantSettings: Sendable, Equatable {
    /// `tenants.directory`: each tenant's database is `<directory>/<id>.sqlite`.
    var directory: String
    /// `tenants.max`: how many tenants may be open at once.
    var maximumOpen: Int
    /// `tenants.idleTimeout`: how long a tenant with no request may stay open.
    var idleTimeout: Duration
    /// Whether any valid tenant ID opens on first use; in production only tenants with a file do.
    var opensUnknownTenants: Bool
    /// The settings of each tenant with a file in `Config/tenants/`.
    var overlays: [TenantID: TenantOverlay]
    /// `tenants.fromDatabase`: the tenants, their states and settings, kept in PostgreSQL
    /// (``TenantRegistryFollower``) instead of in files; only the tenants there are served.
    var fromDatabase = false

    /// The section as `values` hold it, with the tenant files in `folder`.
    ///
    /// - Throws: ``ConfigurationError`` naming the key and its file or variable, or the tenant
    ///   file and its key.
    static func read(
        _ values: ConfigValues,
        folder: String,
        profile: AppConfiguration.Profile,
        databaseKind: AppConfiguration.DatabaseKind
    ) throws -> TenantSettings {
        TenantSettings(
            directory: try values.string("tenants.directory"),
            maximumOpen: try values.int("tenants.max", default: 100, in: 1...1_000_000),
            idleTimeout: .milliseconds(
                Int64(try values.seconds("tenants.idleTimeout", default: 300, in: 0.01...86_400) * 1000)
            ),
            opensUnknownTenants: profile != .production,
            overlays: try TenantOverlay.readAll(in: folder, databaseKind: databaseKind)
        )
    }

    /// The tenancy of a root with these settings: each tenant's database in ``directory``, with
    /// its file's settings over the root's, or with `registry` its settings from the database.
    ///
    /// A tenant refused here answers `404 unknown_tenant` (or, suspended in the registry,
    /// `403 tenant_suspended`), and nothing is opened for it.
    func tenancy(registry: AcceptedTenants? = nil) -> Tenancy {
        let settings = self
        return Tenancy(maximumOpen: maximumOpen, idleTimeout: idleTimeout) { tenant, values in
            let overlay: TenantOverlay?
            if let registry {
                overlay = try registry.overlay(of: tenant)
            } else {
                overlay = settings.overlays[tenant]
                guard overlay != nil || settings.opensUnknownTenants else { throw AcceptedTenants.unknown(tenant) }
            }
            if var database = values.sqliteConfiguration {
                database.path = URL(filePath: settings.directory).appending(path: "\(tenant).sqlite").path
                if let readers = overlay?.readers { database.readers = readers }
                if let synchronous = overlay?.synchronous { database.synchronous = synchronous }
                values.sqliteConfiguration = database
            }
            if let variant = overlay?.repositoryVariant { try values.selectVariant(variant, of: CatalogVariants.entry) }
        }
    }
}

/// One tenant's settings over the profile's, from `Config/tenants/<id>.json`: the keys
/// `catalog.repository`, `database.readers` and `database.synchronous`.
struct TenantOverlay: Sendable, Equatable {
    /// The tenant's file.
    var file: String
    var repositoryVariant: String?
    var readers: Int?
    var synchronous: SQLiteConfiguration.Synchronous?

    /// Every tenant file in `folder`, by tenant, for a root on `databaseKind`; none when the
    /// folder does not exist.
    ///
    /// - Throws: ``ConfigurationError`` naming the file, and the key, of the first invalid one.
    static func readAll(
        in folder: String,
        databaseKind: AppConfiguration.DatabaseKind
    ) throws -> [TenantID: TenantOverlay] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return [:] }
        var overlays: [TenantID: TenantOverlay] = [:]
        for name in names.sorted() where name.hasSuffix(".json") {
            let file = URL(filePath: folder).appending(path: name).path
            guard let tenant = TenantID(String(name.dropLast(".json".count))) else {
                throw ConfigurationError(
                    key: "(file)",
                    source: file,
                    message: "'\(name.dropLast(5))' is not a tenant ID: 1 to 63 characters from a-z, 0-9 and -"
                )
            }
            overlays[tenant] = try read(file, databaseKind: databaseKind)
        }
        return overlays
    }

    /// What the tenant files in `folder` are now: each `.json` file's name, size and modification
    /// time; a change in any is a change of the tenants' settings.
    static func signature(of folder: String) -> [String] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return [] }
        return names.filter { $0.hasSuffix(".json") }.sorted()
            .map { name in
                let attributes = try? FileManager.default.attributesOfItem(atPath: "\(folder)/\(name)")
                let size = attributes?[.size] as? Int ?? -1
                let modified = (attributes?[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
                return "\(name) \(size) \(modified)"
            }
    }

    /// The settings in `file`, for a root on `databaseKind`: `catalog.repository` means what it
    /// means at the root (``AppConfiguration/DatabaseKind/repositoryVariant(named:)``).
    static func read(_ file: String, databaseKind: AppConfiguration.DatabaseKind) throws -> TenantOverlay {
        func error(_ key: String, _ message: String) -> ConfigurationError {
            ConfigurationError(key: key, source: file, message: message)
        }
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: try Data(contentsOf: URL(filePath: file)))
        } catch {
            throw ConfigurationError(key: "(file)", source: file, message: "the file is not valid JSON: \(error)")
        }
        guard let sections = object as? [String: Any] else { throw error("(file)", "expected a JSON object") }
        var overlay = TenantOverlay(file: file)
        for (section, content) in sections {
            guard let keys = content as? [String: Any] else { throw error(section, "expected an object") }
            for (name, value) in keys {
                let key = "\(section).\(name)"
                switch key {
                case "catalog.repository":
                    let known = CatalogVariants.make().names(of: CatalogVariants.entry)
                    guard let name = value as? String, known.contains(name) else {
                        throw error(key, "expected one of: \(known.joined(separator: ", "))")
                    }
                    guard let variant = databaseKind.repositoryVariant(named: name) else {
                        throw error(key, "'\(name)' needs database.kind \(name)")
                    }
                    overlay.repositoryVariant = variant
                case "database.readers":
                    guard let readers = value as? Int, (1...64).contains(readers), !(value is Bool) else {
                        throw error(key, "expected an integer in 1…64")
                    }
                    overlay.readers = readers
                case "database.synchronous":
                    guard let text = value as? String,
                        let synchronous = SQLiteConfiguration.Synchronous(rawValue: text.uppercased())
                    else { throw error(key, "expected one of: off, normal, full, extra") }
                    overlay.synchronous = synchronous
                default:
                    throw error(
                        key,
                        "is not a tenant setting; a tenant file sets catalog.repository, database.readers, "
                            + "database.synchronous"
                    )
                }
            }
        }
        return overlay
    }
}
