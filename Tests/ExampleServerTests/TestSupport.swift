import MovieCatalog
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOFoundationCompat
@testable import Scoped
import ScopedInstrumentation
import ScopedSQLite
import ScopedTestSupport
import Testing

@testable import CatalogApp

/// The repository's `Config/` folder.
let repositoryConfigFolder = URL(filePath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appending(path: "Config").path

/// A profile from the repository's `Config/` folder, on a database in `folder`.
func loadConfiguration(
    _ profile: AppConfiguration.Profile,
    folder: TemporaryFolder,
    environment: [String: String] = [:]
) async throws -> AppConfiguration {
    try await AppConfiguration.load(
        environment: [
            "APP_ENV": profile.rawValue, "CONFIG_DIR": repositoryConfigFolder,
            "DATABASE_PATH": folder.path("catalog.sqlite"),
            // A generous bound on each close (the profiles say 2 or 5 s): beside a build, the
            // start-up check's session close waited more than 5 s for a cooperative thread
            // while the suite's other servers started. A test that means a close to time out
            // sets its own.
            "SHUTDOWN_CLOSE_TIMEOUT": "30",
        ]
        .merging(environment) { $1 }
    )
}

/// The server built as `run` builds it, with a root that starts from the test scope it is made in,
/// validated and seeded as at start-up.
///
/// - Parameters:
///   - configuration: the loaded profile.
///   - logger: the server's logger; by default one that logs warnings to standard error.
///   - instrumentation: where the root reports spans and metrics; by default the process's.
///   - base: the values the root starts from; by default the test scope it is made in.
/// - Returns: the application and its root, which the test shuts down.
/// - Throws: what validation or seeding throws.
func makeApplication(
    _ configuration: AppConfiguration,
    logger: Logger = {
        var logger = Logger(label: "test")
        logger.logLevel = .warning
        return logger
    }(),
    instrumentation: ScopeInstrumentation? = nil,
    base: ScopedValues = .testScopeOrDefaults
) async throws -> (some ApplicationProtocol, ScopeRoot) {
    let root = try CatalogServer.makeRoot(configuration, base: base, instrumentation: instrumentation)
    try await CatalogServer.prepare(root, configuration: configuration, logger: logger)
    return (CatalogServer.makeApplication(root: root, configuration: configuration, logger: logger), root)
}

/// A JSON body.
func json(_ text: String) -> ByteBuffer { ByteBuffer(string: text) }

extension TestResponse {
    /// The body decoded from JSON.
    func decode<T: Decodable>(_ type: T.Type = T.self) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(buffer: body))
    }

    /// The body as a JSON object.
    var object: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(buffer: body))) as? [String: Any] ?? [:]
    }

    /// Expects the documented error shape: code, message, the field when given, and the
    /// request ID that the `X-Request-ID` header carries.
    func expectError(
        _ status: HTTPResponse.Status,
        code: String? = nil,
        field: String?,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(self.status == status, sourceLocation: sourceLocation)
        let error = object["error"] as? [String: Any]
        #expect(error != nil, "error body: \(String(buffer: body))", sourceLocation: sourceLocation)
        if let code { #expect(error?["code"] as? String == code, sourceLocation: sourceLocation) }
        #expect((error?["message"] as? String)?.isEmpty == false, sourceLocation: sourceLocation)
        #expect(error?["field"] as? String == field, sourceLocation: sourceLocation)
        #expect(object["requestID"] as? String == headers[.requestID], sourceLocation: sourceLocation)
    }
}

extension HTTPField.Name {
    static let requestID = Self("X-Request-ID")!
    static let catalog = Self("X-Catalog")!
}

/// What a production root starts from, outside any test scope.
///
/// Defaults, with the live SQLite repository set (the entry is live-only). Validation in such a
/// root builds every service, as at start-up.
func productionValues() -> ScopedValues {
    var values = ScopedValues()
    values.movieRepository = SQLiteMovieRepository()
    return values
}
