import CSQLite

/// The suite's own view of a database file, through the C API, independent of the code under
/// test: integrity checks, lock probes, and reading back what the server acknowledged.
final class RawDatabase {
    private var handle: OpaquePointer?
    let path: String

    init(_ path: String) throws {
        self.path = path
        let result = sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE, nil)
        guard result == SQLITE_OK else {
            defer { sqlite3_close_v2(handle) }
            throw SuiteError("cannot open \(path): \(String(cString: sqlite3_errstr(result)))")
        }
        sqlite3_busy_timeout(handle, 0)
    }

    deinit { sqlite3_close_v2(handle) }

    /// Runs `sql` and returns SQLite's result code, without throwing.
    @discardableResult
    func execute(_ sql: String) -> Int32 {
        sqlite3_exec(handle, sql, nil, nil, nil)
    }

    /// Every row of `sql`, each column as text (NULL as nil).
    func rows(_ sql: String) throws -> [[String?]] {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK else {
            throw SuiteError("\(sql): \(String(cString: sqlite3_errmsg(handle)))")
        }
        defer { sqlite3_finalize(statement) }
        var rows: [[String?]] = []
        while true {
            let step = sqlite3_step(statement)
            if step == SQLITE_DONE { return rows }
            guard step == SQLITE_ROW else { throw SuiteError("\(sql): \(String(cString: sqlite3_errmsg(handle)))") }
            rows.append(
                (0..<sqlite3_column_count(statement))
                    .map { column in
                        sqlite3_column_text(statement, column)
                            .map { text in
                                String(
                                    decoding: UnsafeBufferPointer(
                                        start: text,
                                        count: Int(sqlite3_column_bytes(statement, column))
                                    ),
                                    as: UTF8.self
                                )
                            }
                    }
            )
        }
    }

    /// `PRAGMA integrity_check`: "ok" for a sound file.
    func integrityCheck() throws -> String {
        try rows("PRAGMA integrity_check").compactMap { $0.first ?? nil }.joined(separator: "; ")
    }

    /// Every movie, id → title.
    func movieTitles() throws -> [Int: String] {
        var titles: [Int: String] = [:]
        for row in try rows("SELECT id, title FROM movies") {
            if let id = row[0].flatMap({ Int($0) }) { titles[id] = row[1] ?? "" }
        }
        return titles
    }

    /// A digest of every row of the catalog's tables, to show that nothing changed.
    func contentDigest() throws -> String {
        let movies = try rows("SELECT id, title, year, director FROM movies ORDER BY id")
        let ratings = try rows("SELECT * FROM ratings ORDER BY rowid")
        var hasher = FNV1a()
        for row in movies + [["--"]] + ratings {
            for column in row { hasher.add(column ?? "\u{0}NULL") }
        }
        return "\(movies.count) movies, \(ratings.count) ratings, digest \(String(hasher.value, radix: 16))"
    }

    /// Whether another connection holds the write lock: `BEGIN IMMEDIATE` with no busy wait.
    func writeLockIsFree() -> Bool {
        guard execute("BEGIN IMMEDIATE") == SQLITE_OK else { return false }
        execute("ROLLBACK")
        return true
    }

    /// Whether a full `wal_checkpoint(TRUNCATE)` completes, which it cannot while any
    /// connection holds a read snapshot or the write lock.
    func checkpointCompletes() throws -> Bool {
        guard let row = try rows("PRAGMA wal_checkpoint(TRUNCATE)").first else { return false }
        return row.first == "0"
    }
}
