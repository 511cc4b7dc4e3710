import MovieCatalog
import Scoped
import ScopedSQLite

/// How much of Scoped the hand-wired server adds back.
///
/// It splits the load gap between the hand-wired server and ExampleServer into parts
/// (`SCOPE_LAYER`, SQLite only; `Benchmarks/load-layers.sh`):
///
/// - `none` (the default): no request scope; the handler makes its session by hand.
/// - `scope`: a request scope around every request, on a root holding ExampleServer's SQLite
///   services; the handler still makes its session by hand, so the scope builds nothing.
/// - `session`: the same scope, and `GET /movies/{id}` reads its repository from it, whose
///   session is the scope's `SQLiteSessionKey` service, built on first use and closed with the
///   scope, as in ExampleServer.
enum ScopeLayer: String {
    case none, scope, session

    init(_ environment: [String: String]) throws {
        let name = environment["SCOPE_LAYER"] ?? "none"
        guard let layer = ScopeLayer(rawValue: name) else {
            throw ScopeLayerError(message: "SCOPE_LAYER must be none, scope or session, not \(name)")
        }
        guard layer == .none || environment["DATABASE_KIND"] != "postgres" else {
            throw ScopeLayerError(message: "SCOPE_LAYER is for SQLite only")
        }
        self = layer
    }

    /// The root the request scopes open on, or nil for `none`.
    func root(_ environment: [String: String]) -> ScopeRoot? {
        guard self != .none else { return nil }
        return ScopeRoot(services: [SQLiteDatabaseKey.self, SQLiteSessionKey.self]) {
            $0.sqliteConfiguration = SQLiteConfiguration(
                path: environment["DATABASE_PATH"] ?? "handwired.sqlite",
                migrations: SQLiteMovieRepository.migrations
            )
        }
    }
}

/// `SCOPE_LAYER` names no layer, or one the database cannot have.
struct ScopeLayerError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
