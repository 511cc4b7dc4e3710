/// The statements of one transaction, lent to the closure of ``SQLiteDatabase/read(_:)`` or
/// ``SQLiteDatabase/write(_:)`` for as long as it runs.
///
/// It is borrowed, non-copyable and not `Sendable`: the closure can run statements through it
/// but cannot keep it, return it or hand it to another task, so the connection behind it is
/// only ever used by the one task that leased it.
public struct SQLiteTransaction: ~Copyable {
    private let connection: SQLiteConnection

    init(_ connection: SQLiteConnection) {
        self.connection = connection
    }

    /// Runs a statement that returns no rows; returns the number of rows it changed.
    @discardableResult
    public func execute(_ sql: SQL) throws -> Int {
        try connection.execute(sql)
    }

    /// Runs an `INSERT`; returns the new row's ID.
    public func insert(_ sql: SQL) throws -> Int64 {
        try connection.insert(sql)
    }

    /// Runs a query and returns every row.
    public func query(_ sql: SQL) throws -> [SQLiteRow] {
        try connection.query(sql)
    }

    /// Runs a query and decodes every row into `T`.
    public func query<T: Decodable>(_ sql: SQL, as type: T.Type) throws -> [T] {
        try connection.query(sql, as: type)
    }

    /// Runs a query and returns the first column of the first row, if there is one.
    public func scalar<T: SQLiteBindable>(_ sql: SQL, as type: T.Type = T.self) throws -> T? {
        try connection.scalar(sql, as: type)
    }
}
