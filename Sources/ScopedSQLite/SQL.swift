/// A SQL statement whose interpolated values are bound as parameters, never spliced into the text.
///
/// ```swift
/// let title = "Toy Story'); DROP TABLE movies; --"
/// let sql: SQL = "SELECT id FROM movies WHERE title = \(title)"
/// sql.text  // "SELECT id FROM movies WHERE title = ?"
/// sql.bindings  // [.text("Toy Story'); DROP TABLE movies; --")]
/// ```
///
/// Only string literals become SQL text. Interpolate another `SQL` to compose statements; its
/// bindings come along.
public struct SQL: Hashable, Sendable, ExpressibleByStringInterpolation, CustomStringConvertible {
    /// The statement text, with a `?` for each bound value.
    public private(set) var text: String
    /// The values bound to the `?` parameters, in order.
    public private(set) var bindings: [SQLiteValue]

    /// Creates SQL from a literal with no values.
    public init(stringLiteral value: String) {
        text = value
        bindings = []
    }

    /// Creates SQL from text and the values it binds, in order.
    public init(stringInterpolation: StringInterpolation) {
        text = stringInterpolation.text
        bindings = stringInterpolation.bindings
    }

    /// A description for logs and error messages.
    public var description: String { text }

    /// Builds a ``SQL`` from literal text and bound values.
    public struct StringInterpolation: StringInterpolationProtocol {
        var text = ""
        var bindings: [SQLiteValue] = []

        /// Creates an empty interpolation.
        public init(literalCapacity: Int, interpolationCount: Int) {
            text.reserveCapacity(literalCapacity + interpolationCount)
            bindings.reserveCapacity(interpolationCount)
        }

        /// Appends SQL text written in the literal; it is never a value.
        public mutating func appendLiteral(_ literal: String) {
            text += literal
        }

        /// Binds `value` as a parameter.
        public mutating func appendInterpolation(_ value: some SQLiteBindable) {
            text += "?"
            bindings.append(value.sqliteValue)
        }

        /// Binds an optional value: `NULL` when it is `nil`.
        public mutating func appendInterpolation<Value: SQLiteBindable>(_ value: Value?) {
            text += "?"
            bindings.append(value?.sqliteValue ?? .null)
        }

        /// Binds a value that is already a ``SQLiteValue``.
        public mutating func appendInterpolation(value: SQLiteValue) {
            text += "?"
            bindings.append(value)
        }

        /// Appends another statement fragment and its bindings.
        public mutating func appendInterpolation(_ fragment: SQL) {
            text += fragment.text
            bindings += fragment.bindings
        }
    }
}
