import Configuration
import Foundation
import SystemPackage

/// The files the example server's settings come from: the profile's, in `Config/`, and the
/// optional file named by `CONFIG_FILE` over it (the shape of a mounted deployment file, with
/// the profiles' keys).
struct ConfigurationFiles: Sendable {
    let profileName: AppConfiguration.Profile
    /// The profile's file: `CONFIG_DIR/<APP_ENV>.json`.
    let profile: String
    /// `CONFIG_FILE`, when set.
    let overlay: String?
    /// `CONFIG_DIR/tenants`: a file per tenant, `<id>.json`, over the profile for that tenant.
    let tenantsFolder: String

    /// The files `environment` names.
    ///
    /// - Throws: ``ConfigurationError`` for an unknown profile or a file that does not exist.
    init(environment: [String: String]) throws {
        let name = environment["APP_ENV"] ?? "development"
        guard let profileName = AppConfiguration.Profile(rawValue: name) else {
            throw ConfigurationError(
                key: "APP_ENV",
                source: "environment variable APP_ENV",
                message: "'\(name)' is not a profile; use one of "
                    + AppConfiguration.Profile.allCases.map(\.rawValue).joined(separator: ", ")
            )
        }
        self.profileName = profileName
        let folder = environment["CONFIG_DIR"] ?? "Config"
        profile = URL(filePath: folder).appending(path: "\(profileName.rawValue).json").path
        tenantsFolder = URL(filePath: folder).appending(path: "tenants").path
        overlay = environment["CONFIG_FILE"].flatMap { $0.isEmpty ? nil : $0 }
        for file in [profile] + (overlay.map { [$0] } ?? []) where !FileManager.default.fileExists(atPath: file) {
            throw ConfigurationError(
                key: "(file)",
                source: file,
                message: file == profile ? "the profile file does not exist" : "the CONFIG_FILE file does not exist"
            )
        }
    }

    /// `file`'s settings, read once.
    ///
    /// - Throws: ``ConfigurationError`` naming the file when it is not valid JSON.
    func read(_ file: String) async throws -> Configuration.FileProvider<JSONSnapshot> {
        do {
            return try await Configuration.FileProvider<JSONSnapshot>(filePath: .init(file))
        } catch {
            throw ConfigurationError(key: "(file)", source: file, message: "the file is not valid JSON: \(error)")
        }
    }
}
