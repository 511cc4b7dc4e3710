import MovieCatalog
import Scoped
import ScopedHummingbird

/// What a request read from its scope: at the start of the handler, inside child tasks, and after a round-trip through
/// its database session.
///
/// Every field names the same request when scopes never bleed into one another.
struct ScopeEcho: Codable, Equatable {
    struct Reading: Codable, Equatable {
        var requestID: String?
        /// The type of the request's `movieRepository`: the variant the request selected.
        var repository: String
    }

    var handler: Reading
    var asyncLet: Reading
    var taskGroup: [Reading]
    /// The request ID as the database session returned it from `SELECT ?` (SQLite) or
    /// `SELECT $1::text` (PostgreSQL).
    var database: String?
    var afterDatabase: Reading

    static func read() async throws -> ScopeEcho {
        let handler = Reading.current()
        async let asyncLet = Reading.currentAfterYield()
        let taskGroup = await withTaskGroup(of: Reading.self) { group in
            for _ in 0..<2 { group.addTask { await Reading.currentAfterYield() } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        let values = ScopedValues.current
        let database = try await values.debugDatabase.echo(values.requestID)
        return ScopeEcho(
            handler: handler,
            asyncLet: await asyncLet,
            taskGroup: taskGroup,
            database: database,
            afterDatabase: .current()
        )
    }
}

extension ScopeEcho.Reading {
    static func current() -> Self {
        let values = ScopedValues.current
        return Self(requestID: values.requestID, repository: String(describing: type(of: values.movieRepository)))
    }

    /// Reads after giving other tasks a turn, so that reads interleave with other requests'.
    static func currentAfterYield() async -> Self {
        await Task.yield()
        return current()
    }
}
