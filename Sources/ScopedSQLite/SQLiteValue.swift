/// A value as SQLite stores it: one of its five storage classes.
public enum SQLiteValue: Hashable, Sendable {
    /// `NULL`.
    case null
    /// A 64-bit signed integer.
    case integer(Int64)
    /// A 64-bit floating-point number.
    case real(Double)
    /// UTF-8 text.
    case text(String)
    /// Bytes.
    case blob([UInt8])
}

/// A Swift value that can be bound to a statement parameter and read back from a column.
public protocol SQLiteBindable: Sendable {
    /// The value as SQLite stores it.
    var sqliteValue: SQLiteValue { get }
    /// Reads the value back from a column, or returns `nil` if the column holds another type.
    init?(sqliteValue: SQLiteValue)
}

extension Int: SQLiteBindable {
    /// The value as SQLite stores it.
    public var sqliteValue: SQLiteValue { .integer(Int64(self)) }
    /// Reads the value from SQLite's, or `nil` when it holds another type.
    public init?(sqliteValue: SQLiteValue) {
        guard case .integer(let value) = sqliteValue, let int = Int(exactly: value) else { return nil }
        self = int
    }
}

extension Int64: SQLiteBindable {
    /// The value as SQLite stores it.
    public var sqliteValue: SQLiteValue { .integer(self) }
    /// Reads the value from SQLite's, or `nil` when it holds another type.
    public init?(sqliteValue: SQLiteValue) {
        guard case .integer(let value) = sqliteValue else { return nil }
        self = value
    }
}

extension Double: SQLiteBindable {
    /// The value as SQLite stores it.
    public var sqliteValue: SQLiteValue { .real(self) }
    /// Reads the value from SQLite's, or `nil` when it holds another type.
    public init?(sqliteValue: SQLiteValue) {
        switch sqliteValue {
        case .real(let value): self = value
        case .integer(let value): self = Double(value)
        default: return nil
        }
    }
}

extension Bool: SQLiteBindable {
    /// The value as SQLite stores it.
    public var sqliteValue: SQLiteValue { .integer(self ? 1 : 0) }
    /// Reads the value from SQLite's, or `nil` when it holds another type.
    public init?(sqliteValue: SQLiteValue) {
        guard case .integer(let value) = sqliteValue else { return nil }
        self = value != 0
    }
}

extension String: SQLiteBindable {
    /// The value as SQLite stores it.
    public var sqliteValue: SQLiteValue { .text(self) }
    /// Reads the value from SQLite's, or `nil` when it holds another type.
    public init?(sqliteValue: SQLiteValue) {
        guard case .text(let value) = sqliteValue else { return nil }
        self = value
    }
}

extension [UInt8]: SQLiteBindable {
    /// The value as SQLite stores it.
    public var sqliteValue: SQLiteValue { .blob(self) }
    /// Reads the value from SQLite's, or `nil` when it holds another type.
    public init?(sqliteValue: SQLiteValue) {
        guard case .blob(let value) = sqliteValue else { return nil }
        self = value
    }
}

extension Optional: SQLiteBindable where Wrapped: SQLiteBindable {
    /// The value as SQLite stores it.
    public var sqliteValue: SQLiteValue { self?.sqliteValue ?? .null }
    /// Reads the value from SQLite's, or `nil` when it holds another type.
    public init?(sqliteValue: SQLiteValue) {
        if case .null = sqliteValue {
            self = .none
        } else if let wrapped = Wrapped(sqliteValue: sqliteValue) {
            self = .some(wrapped)
        } else {
            return nil
        }
    }
}
