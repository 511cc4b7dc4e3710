import CSQLiteBench
import Foundation
import GRDB
import Scoped
import ScopedDatabase
import ScopedSQLite

/// Point reads and commits on a 1,000-row table in WAL mode: Scoped's session, the raw C API,
/// and GRDB's pool, each on its own file in a temporary folder.
func sqliteWorkloads() throws -> [Workload] {
    let folder = FileManager.default.temporaryDirectory.appending(path: "scoped-bench-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let schema = SQLiteMigration(
        version: 1,
        name: "movies",
        statements: [
            """
            CREATE TABLE movies (id INTEGER PRIMARY KEY, title TEXT NOT NULL, year INTEGER NOT NULL);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000)
            INSERT INTO movies (id, title, year) SELECT i, 'Movie ' || i, 1900 + i % 100 FROM n;
            """
        ]
    )
    func root(_ name: String, synchronous: SQLiteConfiguration.Synchronous, mode: TransactionMode = .readWrite)
        -> ScopeRoot
    {
        let configuration = SQLiteConfiguration(
            path: folder.appending(path: name).path,
            synchronous: synchronous,
            migrations: [schema]
        )
        return ScopeRoot {
            $0.sqliteConfiguration = configuration
            $0.transactionMode = mode
        }
    }
    // Reads on a reader, as the example's GET requests do (before `TransactionMode`, the
    // default `.deferred` did the same).
    let readRoot = root("read.sqlite", synchronous: .full, mode: .readOnly)
    let fullRoot = root("full.sqlite", synchronous: .full)
    let normalRoot = root("normal.sqlite", synchronous: .normal)

    // The raw C API on the same kind of file.
    let rawPath = folder.appending(path: "raw.sqlite").path
    _ = try SQLiteDatabase(SQLiteConfiguration(path: rawPath, migrations: [schema]))
    var handle: OpaquePointer?
    sqlite3_open_v2(rawPath, &handle, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nil)
    var statement: OpaquePointer?
    sqlite3_prepare_v2(handle, "SELECT title FROM movies WHERE id = ?", -1, &statement, nil)
    let raw = RawStatement(statement: statement!)

    var grdbConfiguration = Configuration()
    grdbConfiguration.maximumReaderCount = 4
    let pool = try DatabasePool(path: folder.appending(path: "grdb.sqlite").path, configuration: grdbConfiguration)
    try pool.write { db in for statement in schema.statements { try db.execute(sql: statement) } }

    let insertCounter = Counter()
    return [
        Workload(group: "sqlite", name: "raw libsqlite3 prepared statement, bind/step/reset") { n in
            var sum = 0
            for i in 0..<n { sum &+= raw.titleLength(id: i % 1000 + 1) }
            return sum
        },
        Workload(group: "sqlite", name: "Scoped session point read, inside one request scope") { n in
            (try? await readRoot.withScope {
                let session = try await ScopedValues.current.sqliteSession
                var sum = 0
                for i in 0..<n {
                    let title = try await session.scalar(
                        "SELECT title FROM movies WHERE id = \(i % 1000 + 1)",
                        as: String.self
                    )
                    sum &+= title?.utf8.count ?? 0
                }
                return sum
            }) ?? 0
        },
        Workload(group: "sqlite", name: "Scoped request scope + session point read (lease, BEGIN, COMMIT)") { n in
            var sum = 0
            for i in 0..<n {
                sum &+=
                    (try? await readRoot.withScope {
                        try await ScopedValues.current.sqliteSession
                            .scalar("SELECT title FROM movies WHERE id = \(i % 1000 + 1)", as: String.self)?
                            .utf8.count ?? 0
                    }) ?? 0
            }
            return sum
        },
        Workload(group: "sqlite", name: "GRDB 7.10 DatabasePool async read per point read") { n in
            var sum = 0
            for i in 0..<n {
                let id = i % 1000 + 1
                sum &+=
                    (try? await pool.read { db in
                        try String.fetchOne(db, sql: "SELECT title FROM movies WHERE id = ?", arguments: [id])
                    })??
                    .utf8.count ?? 0
            }
            return sum
        },
        Workload(group: "sqlite", name: "Scoped insert per request scope, synchronous=FULL (one commit each)") { n in
            await insertEach(n, root: fullRoot, counter: insertCounter)
        },
        Workload(group: "sqlite", name: "Scoped insert per request scope, synchronous=NORMAL (one commit each)") { n in
            await insertEach(n, root: normalRoot, counter: insertCounter)
        },
    ]
}

private func insertEach(_ n: Int, root: ScopeRoot, counter: Counter) async -> Int {
    var sum = 0
    for _ in 0..<n {
        let id = counter.next()
        sum &+=
            (try? await root.withScope {
                Int(
                    try await ScopedValues.current.sqliteSession.insert(
                        "INSERT INTO movies (id, title, year) VALUES (\(id + 1_000_000), \("Inserted"), \(2000))"
                    )
                )
            }) ?? 0
    }
    return sum
}

final class Counter: @unchecked Sendable {
    private var value = 0
    func next() -> Int {
        value += 1
        return value
    }
}

/// A prepared statement used by one task only (the benchmark loop).
final class RawStatement: @unchecked Sendable {
    let statement: OpaquePointer
    init(statement: OpaquePointer) { self.statement = statement }

    @inline(never)
    func titleLength(id: Int) -> Int {
        sqlite3_bind_int64(statement, 1, Int64(id))
        defer { sqlite3_reset(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW else { return 0 }
        return Int(sqlite3_column_bytes(statement, 0))
    }
}
