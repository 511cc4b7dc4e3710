public import Configuration
import Foundation

/// One version of the settings kept in PostgreSQL: every setting as one transaction committed
/// it, never half of a change.
///
/// It is a provider of its own, whose values never change, so that code that reads many keys
/// reads them all from one version: take ``PostgresSettingsProvider/currentSnapshot`` once and
/// read through it. Values are typed as swift-configuration's JSON files type them.
public struct PostgresSettingsSnapshot: Sendable, CustomStringConvertible {
    /// The version: 0 before the first change, then one more for each change committed.
    public let version: Int64
    /// `nil` for version 0 before anything was read: no settings.
    private let values: JSONSnapshot?
    /// `PostgreSQL settings, version <n>`.
    public let providerName: String

    /// The settings `json`, an object keyed by the settings' keys, hold at `version`; `name` says
    /// where they come from in error messages (by default `PostgreSQL settings, version <n>`).
    ///
    /// - Throws: swift-configuration's parsing error for JSON it cannot read (a nested array).
    init(version: Int64, json: String, name: String? = nil) throws {
        self.version = version
        providerName = name ?? Self.name(version: version)
        let bytes = Array(json.utf8)
        values = try JSONSnapshot(
            data: bytes.span.bytes,
            providerName: providerName,
            parsingOptions: .default
        )
    }

    /// No settings, at version 0: what a provider holds before its first read.
    static let empty = PostgresSettingsSnapshot()

    private init() {
        version = 0
        values = nil
        providerName = Self.name(version: 0)
    }

    private static func name(version: Int64) -> String { "PostgreSQL settings, version \(version)" }

    /// `PostgreSQL settings, version <n>`: where an invalid value came from, for error messages.
    public var description: String { providerName }
}

extension PostgresSettingsSnapshot: ConfigSnapshot, ConfigProvider {
    /// The value `key` has in this version, typed as a JSON file's would be.
    public func value(forKey key: AbsoluteConfigKey, type: ConfigType) throws -> LookupResult {
        guard let values else { return LookupResult(encodedKey: key.description, value: nil) }
        return try values.value(forKey: key, type: type)
    }

    /// The value `key` has in this version.
    public func fetchValue(forKey key: AbsoluteConfigKey, type: ConfigType) async throws -> LookupResult {
        try value(forKey: key, type: type)
    }

    /// The value `key` has in this version, once: a version never changes.
    public func watchValue<Return: ~Copyable>(
        forKey key: AbsoluteConfigKey,
        type: ConfigType,
        updatesHandler: (ConfigUpdatesAsyncSequence<Result<LookupResult, any Error>, Never>) async throws -> Return
    ) async throws -> Return {
        try await watchValueFromValue(forKey: key, type: type, updatesHandler: updatesHandler)
    }

    /// This version.
    public func snapshot() -> any ConfigSnapshot { self }

    /// This version, once: a version never changes.
    public func watchSnapshot<Return: ~Copyable>(
        updatesHandler: (ConfigUpdatesAsyncSequence<any ConfigSnapshot, Never>) async throws -> Return
    ) async throws -> Return {
        try await watchSnapshotFromSnapshot(updatesHandler: updatesHandler)
    }
}
