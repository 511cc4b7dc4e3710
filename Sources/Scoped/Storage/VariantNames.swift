import Synchronization

/// The names of the variants that have set entries, known by a small number so that an
/// ``EntryInfo`` can say which variant set a value without holding a string.
///
/// Variants are chosen by configuration, so there are few names and they are added while
/// roots and scopes are configured, never on the read path. Names are never removed.
enum VariantNames {
    private struct Table {
        var names: [String] = [""]
        var indices: [String: UInt32] = [:]
    }

    private static let table = Mutex(Table())

    /// The number standing for `name`, the same each time; never 0.
    static func index(of name: String) -> UInt32 {
        table.withLock { table in
            if let index = table.indices[name] { return index }
            let index = UInt32(table.names.count)
            precondition(index < 1 << 26, "more than 2^26 distinct variant names")
            table.names.append(name)
            table.indices[name] = index
            return index
        }
    }

    /// The name `index` stands for, or `nil` for 0.
    static func name(at index: UInt32) -> String? {
        index == 0 ? nil : table.withLock { $0.names[Int(index)] }
    }
}
