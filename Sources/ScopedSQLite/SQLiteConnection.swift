import CSQLite
import Synchronization

/// One connection to a database file, with its own cache of prepared statements.
///
/// Internal: clients reach it only through a borrowed ``SQLiteTransaction`` or a ``SQLiteSession``.
///
/// `@unchecked Sendable`: it is opened with `SQLITE_OPEN_NOMUTEX`, so it must never be used by
/// two tasks at once. Its `AsyncPool` (ScopedDatabase) makes that true: a connection is leased to one holder
/// at a time (a session, which serializes its own statements, or a `read`/`write` call) and
/// taken back before it is leased again; nothing outside this module can hold one. The
/// connection checks it too: a statement, script or close that begins while another runs stops
/// the process with a message naming the file, where SQLite would corrupt memory.
final class SQLiteConnection: @unchecked Sendable {
    private let handle: OpaquePointer
    private var statements: [String: OpaquePointer] = [:]
    /// The file the connection is open on.
    let path: String
    /// Whether this is the database's writer, whose statements wait for the disk.
    let isWriter: Bool

    /// Opens `path` with the given `sqlite3_open_v2` flags.
    init(path: String, flags: Int32, isWriter: Bool) throws {
        var handle: OpaquePointer?
        let result = sqlite3_open_v2(path, &handle, flags | SQLITE_OPEN_NOMUTEX, nil)
        guard result == SQLITE_OK, let handle else {
            let error = SQLiteError(resultCode: result, connection: handle, sql: nil)
            sqlite3_close_v2(handle)
            throw error
        }
        sqlite3_extended_result_codes(handle, 1)
        self.handle = handle
        self.path = path
        self.isWriter = isWriter
    }

    deinit {
        close()
    }

    /// Whether ``interrupt()`` was called, and whether ``close()`` was: the only state another
    /// task touches, under its lock, so an interrupt never reaches a closed handle.
    private let interruption = Mutex((isClosed: false, wasInterrupted: false))

    /// Interrupts the statement running on the connection, from any task.
    ///
    /// The statement fails with `SQLITE_INTERRUPT`. A connection once interrupted is discarded,
    /// never reused.
    func interrupt() {
        interruption.withLock { state in
            guard !state.isClosed else { return }
            state.wasInterrupted = true
            sqlite3_interrupt(handle)
        }
    }

    /// Whether ``interrupt()`` was called: the connection must be closed, not returned.
    var wasInterrupted: Bool { interruption.withLock { $0.wasInterrupted } }

    /// Set while a statement, a script or the close runs on the handle.
    private let inUse = Atomic<Bool>(false)

    /// Runs `body`, which uses the handle, and stops the process if another use is under way:
    /// the pool's promise of one holder at a time, checked rather than trusted.
    private func exclusively<R>(_ body: () throws -> R) rethrows -> R {
        let claimed = inUse.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged
        precondition(claimed, "SQLiteConnection on \(path) used by two tasks at once; it has one holder at a time")
        defer { inUse.store(false, ordering: .releasing) }
        return try body()
    }

    /// Finalizes the cached statements and closes the connection.
    func close() {
        exclusively {
            let wasClosed = interruption.withLock { state in
                defer { state.isClosed = true }
                return state.isClosed
            }
            guard !wasClosed else { return }
            for statement in statements.values { sqlite3_finalize(statement) }
            statements = [:]
            sqlite3_close_v2(handle)
        }
    }

    /// Runs `sql`, which may hold several statements and no bound values (schema, pragmas).
    func executeScript(_ sql: String) throws {
        try exclusively {
            var message: UnsafeMutablePointer<CChar>?
            let result = sqlite3_exec(handle, sql, nil, nil, &message)
            if result != SQLITE_OK {
                let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(result))
                sqlite3_free(message)
                throw SQLiteError(code: .init(resultCode: result), resultCode: result, message: text, sql: sql)
            }
        }
    }

    /// Sets how long a statement that finds the file locked by another connection retries.
    ///
    /// SQLite's own busy handler, for another process's connection or another database's on the
    /// same file; zero fails at once.
    func setBusyTimeout(_ timeout: Duration) {
        let (seconds, attoseconds) = timeout.components
        let milliseconds = Int32(
            clamping: seconds.multipliedReportingOverflow(by: 1000).partialValue
                + attoseconds / 1_000_000_000_000_000
        )
        exclusively { _ = sqlite3_busy_timeout(handle, max(0, milliseconds)) }
    }

    /// Begins, commits or rolls back a transaction with a prepared statement kept in the
    /// cache, so the hot path of every request parses no SQL.
    func transaction(_ command: TransactionCommand) throws {
        try execute(command.statement)
    }

    /// The statements that begin and end a transaction.
    enum TransactionCommand {
        /// `BEGIN`: a deferred transaction, for reads.
        case begin
        /// `BEGIN IMMEDIATE`: takes the write lock now.
        case beginImmediate
        case commit
        case rollback

        var statement: SQL {
            switch self {
            case .begin: "BEGIN"
            case .beginImmediate: "BEGIN IMMEDIATE"
            case .commit: "COMMIT"
            case .rollback: "ROLLBACK"
            }
        }
    }

    /// Runs a statement that returns no rows; returns the number of rows it changed.
    @discardableResult
    func execute(_ sql: SQL) throws -> Int {
        try runToEnd(sql) { Int(sqlite3_changes(handle)) }
    }

    /// Runs an `INSERT`; returns the new row's ID.
    func insert(_ sql: SQL) throws -> Int64 {
        try runToEnd(sql) { sqlite3_last_insert_rowid(handle) }
    }

    /// Steps `sql` until it is done, then reads `result` from the connection before another
    /// statement can change it.
    private func runToEnd<R>(_ sql: SQL, then result: () -> R) throws -> R {
        try withStatement(sql) { statement in
            while try step(statement, sql: sql) {}
            return result()
        }
    }

    /// Runs a query and returns every row.
    func query(_ sql: SQL) throws -> [SQLiteRow] {
        try withStatement(sql) { statement in
            let count = sqlite3_column_count(statement)
            let columns = (0..<count).map { String(cString: sqlite3_column_name(statement, $0)) }
            var rows: [SQLiteRow] = []
            while try step(statement, sql: sql) {
                rows.append(SQLiteRow(columns: columns, values: (0..<count).map { column(statement, $0) }))
            }
            return rows
        }
    }

    /// Runs a query and decodes every row into `T`.
    func query<T: Decodable>(_ sql: SQL, as type: T.Type) throws -> [T] {
        try query(sql).map { try $0.decode(type) }
    }

    /// Runs a query and returns the first column of the first row, if there is one.
    func scalar<T: SQLiteBindable>(_ sql: SQL, as type: T.Type = T.self) throws -> T? {
        try withStatement(sql) { statement in
            guard try step(statement, sql: sql) else { return nil }
            return T(sqliteValue: column(statement, 0))
        }
    }

    /// Whether a transaction is open on this connection.
    var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    private func withStatement<R>(_ sql: SQL, _ body: (OpaquePointer) throws -> R) throws -> R {
        try exclusively {
            let statement = try prepared(sql.text)
            defer {
                sqlite3_reset(statement)
                sqlite3_clear_bindings(statement)
            }
            for (index, value) in sql.bindings.enumerated() {
                let result = bind(value, to: statement, at: Int32(index + 1))
                if result != SQLITE_OK { throw SQLiteError(resultCode: result, connection: handle, sql: sql.text) }
            }
            return try body(statement)
        }
    }

    private func prepared(_ text: String) throws -> OpaquePointer {
        if let statement = statements[text] { return statement }
        var statement: OpaquePointer?
        let result = sqlite3_prepare_v3(handle, text, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard result == SQLITE_OK, let statement else {
            throw SQLiteError(resultCode: result, connection: handle, sql: text)
        }
        statements[text] = statement
        return statement
    }

    /// Steps once: `true` when a row is ready, `false` when the statement is done.
    private func step(_ statement: OpaquePointer, sql: SQL) throws -> Bool {
        switch sqlite3_step(statement) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let result: throw SQLiteError(resultCode: result, connection: handle, sql: sql.text)
        }
    }

    private func bind(_ value: SQLiteValue, to statement: OpaquePointer, at index: Int32) -> Int32 {
        switch value {
        case .null: return sqlite3_bind_null(statement, index)
        case .integer(let value): return sqlite3_bind_int64(statement, index, value)
        case .real(let value): return sqlite3_bind_double(statement, index, value)
        case .text(var value):
            // With its byte count, not -1: a NUL inside the text must not end it.
            return value.withUTF8 { bytes in
                sqlite3_bind_text(statement, index, bytes.baseAddress, Int32(bytes.count), csqlite_transient())
            }
        case .blob(let value):
            return value.withUnsafeBytes { bytes in
                sqlite3_bind_blob(statement, index, bytes.baseAddress, Int32(bytes.count), csqlite_transient())
            }
        }
    }

    private func column(_ statement: OpaquePointer, _ index: Int32) -> SQLiteValue {
        switch sqlite3_column_type(statement, index) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(statement, index))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(statement, index))
        case SQLITE_TEXT:
            // The pointer first, then its byte count, as SQLite documents; a NUL inside stays.
            guard let text = sqlite3_column_text(statement, index) else { return .text("") }
            let count = Int(sqlite3_column_bytes(statement, index))
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(statement, index))
            guard count > 0, let bytes = sqlite3_column_blob(statement, index) else { return .blob([]) }
            return .blob(Array(UnsafeRawBufferPointer(start: bytes, count: count)))
        default: return .null
        }
    }
}
