/// Decodes a ``SQLiteRow`` into a `Decodable` whose properties are the row's columns.
struct SQLiteRowDecoder: Decoder {
    let row: SQLiteRow
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] = [:]

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(Columns(row: row))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw SQLiteDecodingError.unsupported("an unkeyed container")
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw SQLiteDecodingError.unsupported("a single value")
    }

    private struct Columns<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let row: SQLiteRow
        var codingPath: [any CodingKey] { [] }
        var allKeys: [Key] { row.columns.compactMap { Key(stringValue: $0) } }

        func contains(_ key: Key) -> Bool { row[key.stringValue] != nil }

        func decodeNil(forKey key: Key) throws -> Bool {
            guard let value = row[key.stringValue] else { throw SQLiteDecodingError.missingColumn(key.stringValue) }
            return value == .null
        }

        func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try row.get(key.stringValue) }
        func decode(_ type: String.Type, forKey key: Key) throws -> String { try row.get(key.stringValue) }
        func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try row.get(key.stringValue) }
        func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
            Float(try row.get(key.stringValue, as: Double.self))
        }
        func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try row.get(key.stringValue) }
        func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try row.get(key.stringValue) }

        func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try integer(key) }
        func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try integer(key) }
        func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try integer(key) }
        func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try integer(key) }
        func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try integer(key) }
        func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try integer(key) }
        func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try integer(key) }
        func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try integer(key) }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            if let bindable = type as? any SQLiteBindable.Type {
                return try row.get(key.stringValue, as: bindable) as! T
            }
            throw SQLiteDecodingError.unsupported(String(describing: type))
        }

        func nestedContainer<NestedKey: CodingKey>(
            keyedBy type: NestedKey.Type,
            forKey key: Key
        ) throws -> KeyedDecodingContainer<NestedKey> {
            throw SQLiteDecodingError.unsupported("a nested container")
        }

        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            throw SQLiteDecodingError.unsupported("a nested container")
        }

        func superDecoder() throws -> any Decoder { throw SQLiteDecodingError.unsupported("a super decoder") }
        func superDecoder(forKey key: Key) throws -> any Decoder {
            throw SQLiteDecodingError.unsupported("a super decoder")
        }

        private func integer<T: FixedWidthInteger>(_ key: Key) throws -> T {
            let value: Int64 = try row.get(key.stringValue)
            guard let exact = T(exactly: value) else {
                throw SQLiteDecodingError.typeMismatch(
                    column: key.stringValue,
                    expected: String(describing: T.self),
                    found: .integer(value)
                )
            }
            return exact
        }
    }
}
