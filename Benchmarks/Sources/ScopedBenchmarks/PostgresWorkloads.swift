import Foundation
import Logging
import PostgresNIO
import Scoped
import ScopedPostgres

/// Point reads on a 1,000-row PostgreSQL table, one request each.
///
/// Scoped's request scope and session against the same statements on a connection leased by
/// hand. Rows only when `POSTGRES_URL` names a server (Benchmarks/postgres.sh starts one).
func postgresWorkloads() async throws -> [Workload] {
    guard let url = ProcessInfo.processInfo.environment["POSTGRES_URL"] else { return [] }
    let schema = PostgresMigration(
        version: 1,
        name: "movies",
        statements: [
            "CREATE TABLE movies (id integer PRIMARY KEY, title text NOT NULL, year integer NOT NULL)",
            "INSERT INTO movies SELECT i, 'Movie ' || i, 1900 + i % 100 FROM generate_series(1, 1000) AS i",
        ]
    )
    let configuration = try PostgresConfiguration(url: url, maximumConnections: 4, migrations: [schema])
    let root = ScopeRoot(services: [PostgresClientKey.self, PostgresDatabaseKey.self, PostgresSessionKey.self]) {
        $0.postgresConfiguration = configuration
    }
    // What `withRunningServices` does: the client runs from its build, before the migration.
    let scopedClient = try await root.values.service(PostgresClientKey.self)
    Task { await scopedClient.run() }
    let problems = await root.validate()
    guard problems.isEmpty else { throw BenchmarkSetupError(description: "\(problems)") }

    let client = PostgresClient(configuration: configuration.clientConfiguration)
    Task { await client.run() }
    let logger = Logger(label: "bench", factory: { _ in SwiftLogNoOpLogHandler() })

    return try fluentWorkloads(url: url) + [
        Workload(group: "postgres", name: "by hand: lease, SELECT, return (no transaction)") { n in
            var sum = 0
            for i in 0..<n {
                sum &+=
                    (try? await client.withConnection { connection in
                        try await
                            connection.query("SELECT title FROM movies WHERE id = \(i % 1000 + 1)", logger: logger)
                            .collect()[0]
                            .decode(String.self).utf8.count
                    }) ?? 0
            }
            return sum
        },
        Workload(group: "postgres", name: "by hand: lease, BEGIN, SELECT, COMMIT, return") { n in
            var sum = 0
            for i in 0..<n {
                sum &+=
                    (try? await client.withConnection { connection in
                        _ = try await connection.query("BEGIN", logger: logger).collect()
                        let title =
                            try await
                            connection.query(
                                "SELECT title FROM movies WHERE id = \(i % 1000 + 1)",
                                logger: logger
                            )
                            .collect()[0]
                            .decode(String.self)
                        _ = try await connection.query("COMMIT", logger: logger).collect()
                        return title.utf8.count
                    }) ?? 0
            }
            return sum
        },
        Workload(group: "postgres", name: "Scoped request scope + session point read (lease, BEGIN, COMMIT)") { n in
            var sum = 0
            for i in 0..<n {
                sum &+=
                    (try? await root.withScope {
                        try await ScopedValues.current.postgresSession
                            .query(
                                "SELECT title FROM movies WHERE id = \(i % 1000 + 1)"
                            )[0]
                            .decode(String.self).utf8.count
                    }) ?? 0
            }
            return sum
        },
    ]
}

/// The benchmark could not set up its database.
struct BenchmarkSetupError: Error, CustomStringConvertible {
    var description: String
}
