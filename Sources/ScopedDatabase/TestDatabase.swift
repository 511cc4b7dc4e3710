public import Scoped

/// A real database that a test runs against, isolated from every other test and undone when
/// the test ends.
///
/// ScopedTesting's `.scoped(database:)` trait takes one; ScopedSQLite's `.sqlite(migrations:)`,
/// ScopedPostgres's `.postgres(_:)` and ScopedFluent's `.fluent` make one. While the test runs,
/// every session of every scope the test opens, including the request scopes an application
/// under test opens on a root it builds inside the test, runs on the test's isolated database
/// instead of the one the application configured.
public protocol TestDatabase: Sendable {
    /// Prepares the test's isolated database, runs `body` with the update that sends the
    /// test's sessions to it, and undoes everything when `body` returns or throws.
    ///
    /// - Parameters:
    ///   - test: the test's name, for messages.
    ///   - body: runs the test; the trait applies `isolate` to the test scope's values.
    /// - Returns: what `body` returns.
    /// - Throws: what preparing the database throws, or what `body` throws.
    func withIsolation<R: Sendable>(
        for test: String,
        _ body: (_ isolate: @escaping @Sendable (inout ScopedValues) -> Void) async throws -> R
    ) async throws -> R
}
