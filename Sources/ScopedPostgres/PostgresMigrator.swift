import Logging
import PostgresNIO

/// Applies migrations, each once, under an advisory lock that serializes every instance.
enum PostgresMigrator {
    /// The advisory lock's key: any constant the application does not use itself.
    static let lockKey: Int64 = 0x5C0_9ED

    /// Applies the migrations `applied` does not list, in `version` order.
    ///
    /// - Returns: the versions applied now.
    @discardableResult
    static func migrate(
        _ client: PostgresClient,
        _ migrations: [PostgresMigration],
        in schema: PostgresSchema? = nil,
        logger: Logger
    ) async throws -> [Int] {
        try await client.withConnection { connection in
            // A schema's migrations take a lock of the schema's own: other tenants do not wait.
            let lock: PostgresQuery
            let unlock: PostgresQuery
            if let schema {
                let key = Int32(truncatingIfNeeded: lockKey)
                lock = "SELECT pg_advisory_lock(\(key), hashtext(\(schema.name)))"
                unlock = "SELECT pg_advisory_unlock(\(key), hashtext(\(schema.name)))"
            } else {
                lock = "SELECT pg_advisory_lock(\(lockKey))"
                unlock = "SELECT pg_advisory_unlock(\(lockKey))"
            }
            _ = try await connection.query(lock, logger: logger).collect()
            do {
                if let schema {
                    _ =
                        try await connection.query(
                            PostgresQuery(unsafeSQL: "CREATE SCHEMA IF NOT EXISTS \(schema)"),
                            logger: logger
                        )
                        .collect()
                    _ =
                        try await connection.query(
                            PostgresQuery(unsafeSQL: "SET search_path TO \(schema)"),
                            logger: logger
                        )
                        .collect()
                }
                let applied = try await apply(migrations, on: connection, logger: logger)
                // The connection goes back to the pool with the default search path.
                if schema != nil { _ = try await connection.query("RESET search_path", logger: logger).collect() }
                _ = try await connection.query(unlock, logger: logger).collect()
                return applied
            } catch {
                if schema != nil { _ = try? await connection.query("RESET search_path", logger: logger).collect() }
                _ = try? await connection.query(unlock, logger: logger).collect()
                throw error
            }
        }
    }

    /// Applies the migrations the connection's `scoped_migrations` table (in its search path)
    /// does not list, each in a transaction of its own; or, `inTransaction`, each in a
    /// savepoint of the transaction the connection is in, which its end commits or undoes.
    ///
    /// - Returns: the versions applied now.
    static func apply(
        _ migrations: [PostgresMigration],
        on connection: PostgresConnection,
        inTransaction: Bool = false,
        logger: Logger
    ) async throws -> [Int] {
        let (begin, commit, rollback): (PostgresQuery, PostgresQuery, PostgresQuery) =
            inTransaction
            ? (
                "SAVEPOINT scoped_migration", "RELEASE SAVEPOINT scoped_migration",
                "ROLLBACK TO SAVEPOINT scoped_migration"
            )
            : ("BEGIN", "COMMIT", "ROLLBACK")
        _ =
            try await connection.query(
                """
                CREATE TABLE IF NOT EXISTS scoped_migrations (
                    version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())
                """,
                logger: logger
            )
            .collect()
        var done = Set<Int>()
        for try await version in try await connection.query("SELECT version FROM scoped_migrations", logger: logger)
            .decode(Int.self)
        {
            done.insert(version)
        }
        var applied: [Int] = []
        for migration in migrations.sorted(by: { $0.version < $1.version }) where !done.contains(migration.version) {
            _ = try await connection.query(begin, logger: logger).collect()
            do {
                for statement in migration.statements {
                    _ = try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger).collect()
                }
                _ =
                    try await connection.query(
                        "INSERT INTO scoped_migrations (version, name) VALUES (\(migration.version), \(migration.name))",
                        logger: logger
                    )
                    .collect()
                _ = try await connection.query(commit, logger: logger).collect()
            } catch {
                _ = try? await connection.query(rollback, logger: logger).collect()
                throw PostgresMigrationError(
                    version: migration.version,
                    name: migration.name,
                    underlying: PostgresDatabaseError.classify(error)
                )
            }
            logger.notice("Applied PostgreSQL migration \(migration.version) (\(migration.name))")
            applied.append(migration.version)
        }
        return applied
    }
}

/// A migration failed; it was rolled back, and the ones after it were not applied.
public struct PostgresMigrationError: Error, Sendable, CustomStringConvertible {
    /// The migration's version.
    public var version: Int
    /// The migration's name.
    public var name: String
    /// What failed.
    public var underlying: any Error

    /// A description for logs and error messages.
    public var description: String { "Migration \(version) (\(name)) failed: \(underlying)" }
}
