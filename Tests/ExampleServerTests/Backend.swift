import MovieCatalog
import ScopedTestSupport
import Testing

/// The database a test runs the example server on.
enum Backend: String, CaseIterable, CustomTestStringConvertible {
    case sqlite, postgres

    var testDescription: String { rawValue }

    /// The repository the backend's production variant uses.
    var repository: any MovieRepository {
        switch self {
        case .sqlite: SQLiteMovieRepository()
        case .postgres: PostgresMovieRepository()
        }
    }

    /// The backends tests run on here: PostgreSQL where a server can be had, and in CI always.
    static let available: [Backend] = PostgresTestServer.isEnabled ? allCases : [.sqlite]
}
