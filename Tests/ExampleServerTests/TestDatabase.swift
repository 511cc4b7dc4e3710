import Foundation
import ScopedSQLite
import ScopedTestSupport

/// A new, empty database for one test server, and a way to reach it from outside the server,
/// as another process would: a file in a temporary folder on SQLite, a database of its own on
/// the test cluster on PostgreSQL.
///
/// Its statements are plain SQL that both backends accept.
struct TestDatabase: Sendable {
    let backend: Backend
    /// Holds the SQLite file (and, on either backend, anything else a test writes).
    let folder: TemporaryFolder
    /// What selects the database when the configuration loads.
    let environment: [String: String]
    private let postgresName: String?

    init(_ backend: Backend) async throws {
        self.backend = backend
        folder = try TemporaryFolder()
        switch backend {
        case .sqlite:
            environment = [:]
            postgresName = nil
        case .postgres:
            let created = try await PostgresTestServer.shared().makeDatabase()
            environment = ["DATABASE_KIND": "postgres", "DATABASE_URL": created.url]
            postgresName = created.name
        }
    }

    /// Runs `sql` in a transaction of its own, outside the server.
    ///
    /// - Parameter sql: one statement.
    /// - Throws: the database's error for a statement it refuses.
    func execute(_ sql: String) async throws {
        if let postgresName {
            _ = try await PostgresTestServer.shared().psql(sql, database: postgresName)
        } else {
            let database = try await sqlite()
            defer { Task { await database.close() } }
            _ = try await database.write { try $0.execute(SQL(stringLiteral: sql)) }
        }
    }

    /// The first column of every row `sql` returns, as integers, read outside the server.
    ///
    /// - Parameter sql: a query whose first column is an integer.
    /// - Returns: the integers, in the rows' order.
    /// - Throws: the database's error for a query it refuses.
    func integers(_ sql: String) async throws -> [Int] {
        if let postgresName {
            return try await PostgresTestServer.shared().psql(sql, database: postgresName)
                .split(separator: "\n").compactMap { Int($0.split(separator: "|").first ?? "") }
        }
        let database = try await sqlite()
        defer { Task { await database.close() } }
        return try await database.read { transaction in
            try transaction.query(SQL(stringLiteral: sql))
                .compactMap { row -> Int? in
                    guard case .integer(let value) = row[0] else { return nil }
                    return Int(value)
                }
        }
    }

    /// The one integer `sql` returns, such as a count.
    func integer(_ sql: String) async throws -> Int? { try await integers(sql).first }

    private func sqlite() async throws -> SQLiteDatabase {
        try await SQLiteDatabase.open(SQLiteConfiguration(path: folder.path("catalog.sqlite")))
    }
}
