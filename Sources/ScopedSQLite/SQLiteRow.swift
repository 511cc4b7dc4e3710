/// One row of a query's result: values by column index or name, or decoded into a `Decodable`.
public struct SQLiteRow: Sendable {
    /// The column names, in order.
    public let columns: [String]
    /// The values, in column order.
    public let values: [SQLiteValue]

    /// A row with these columns and values, in the same order.
    public init(columns: [String], values: [SQLiteValue]) {
        self.columns = columns
        self.values = values
    }

    /// The value of the column at `index`.
    public subscript(index: Int) -> SQLiteValue { values[index] }

    /// The value of the column named `name`, or `nil` if there is no such column.
    public subscript(name: String) -> SQLiteValue? {
        columns.firstIndex(of: name).map { values[$0] }
    }

    /// The column named `name` read as `T`.
    ///
    /// - Throws: ``SQLiteDecodingError`` when the column is missing or holds another type.
    public func get<T: SQLiteBindable>(_ name: String, as type: T.Type = T.self) throws -> T {
        guard let value = self[name] else { throw SQLiteDecodingError.missingColumn(name) }
        guard let decoded = T(sqliteValue: value) else {
            throw SQLiteDecodingError.typeMismatch(column: name, expected: String(describing: T.self), found: value)
        }
        return decoded
    }

    /// Decodes the row into `T`, matching coding keys to column names.
    public func decode<T: Decodable>(_ type: T.Type = T.self) throws -> T {
        try T(from: SQLiteRowDecoder(row: self))
    }
}

/// Why a row could not be read as the requested type.
public enum SQLiteDecodingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The result has no column of this name.
    case missingColumn(String)
    /// The column holds a value of another type.
    case typeMismatch(column: String, expected: String, found: SQLiteValue)
    /// The requested type cannot be decoded from a row (nested containers, arrays).
    case unsupported(String)

    /// A description for logs and error messages.
    public var description: String {
        switch self {
        case .missingColumn(let column): "The result has no column '\(column)'."
        case .typeMismatch(let column, let expected, let found): "Column '\(column)' holds \(found), not \(expected)."
        case .unsupported(let what): "Rows cannot be decoded into \(what)."
        }
    }
}
