import CSQLite

/// An error from SQLite, with its kind, SQLite's own message and the statement that failed.
public struct SQLiteError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of failure it is.
    public enum Code: Hashable, Sendable {
        /// The database is locked by another connection or process (`SQLITE_BUSY`, `SQLITE_LOCKED`).
        case busy
        /// A constraint failed: unique, not null, foreign key, check (`SQLITE_CONSTRAINT`).
        case constraint
        /// The database was opened read-only or the file cannot be written (`SQLITE_READONLY`).
        case readOnly
        /// The file is damaged or is not a database (`SQLITE_CORRUPT`, `SQLITE_NOTADB`).
        case corrupt
        /// The operating system reported an I/O error (`SQLITE_IOERR`).
        case ioError
        /// The disk or the database is full (`SQLITE_FULL`).
        case full
        /// SQLite was used incorrectly (`SQLITE_MISUSE`, `SQLITE_RANGE`).
        case misuse
        /// The file could not be opened (`SQLITE_CANTOPEN`).
        case cantOpen
        /// Any other result code.
        case other(Int32)

        init(resultCode: Int32) {
            switch resultCode & 0xFF {
            case SQLITE_BUSY, SQLITE_LOCKED: self = .busy
            case SQLITE_CONSTRAINT: self = .constraint
            case SQLITE_READONLY: self = .readOnly
            case SQLITE_CORRUPT, SQLITE_NOTADB: self = .corrupt
            case SQLITE_IOERR: self = .ioError
            case SQLITE_FULL: self = .full
            case SQLITE_MISUSE, SQLITE_RANGE: self = .misuse
            case SQLITE_CANTOPEN: self = .cantOpen
            default: self = .other(resultCode)
            }
        }
    }

    /// What kind of failure it is.
    public let code: Code
    /// SQLite's extended result code.
    public let resultCode: Int32
    /// SQLite's message.
    public let message: String
    /// The statement's text (with `?` for bound values), if a statement failed.
    public let sql: String?

    /// An error of kind `code`, with SQLite's result code and message and the failed statement.
    public init(code: Code, resultCode: Int32, message: String, sql: String?) {
        self.code = code
        self.resultCode = resultCode
        self.message = message
        self.sql = sql
    }

    init(resultCode: Int32, connection: OpaquePointer?, sql: String?) {
        let message =
            connection.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) }
            ?? String(cString: sqlite3_errstr(resultCode))
        self.init(code: Code(resultCode: resultCode), resultCode: resultCode, message: message, sql: sql)
    }

    /// A description for logs and error messages.
    public var description: String {
        var text = "SQLite error \(resultCode) (\(code)): \(message)"
        if let sql { text += " in: \(sql)" }
        return text
    }
}
