import PostgresNIO
public import Scoped

/// A PostgreSQL schema a tenant's tables live in: `t_<tenant>`.
///
/// Made only from a `TenantID`, whose characters (`a-z`, `0-9`, `-`) need no escaping inside a
/// quoted identifier, and whose `t_` prefix no other tenant's schema, and no schema of
/// PostgreSQL's own (`public`, `pg_*`), can have: a tenant ID never holds `_`.
public struct PostgresSchema: Hashable, Sendable, CustomStringConvertible {
    /// The schema's name, unquoted.
    public let name: String

    /// The schema of `tenant`, or `nil` when its name would pass PostgreSQL's 63-byte limit on
    /// identifiers (an ID longer than 61 characters): PostgreSQL would cut it short, and two
    /// tenants could share one.
    public init?(tenant: TenantID) {
        let name = "t_\(tenant.rawValue)"
        guard name.utf8.count <= 63 else { return nil }
        self.name = name
    }

    /// A schema of one test's own for a tenant: `tt_` and a random 64-bit number in hex, which
    /// no tenant's schema (`t_…`) can have, nor, but by a 1-in-2⁶⁴ chance, another test's.
    static func testSchema() -> PostgresSchema {
        PostgresSchema(name: "tt_" + String(UInt64.random(in: .min ... .max), radix: 16))
    }

    private init(name: String) { self.name = name }

    /// The name, quoted: `"t_acme"`.
    public var description: String { "\"\(name)\"" }

    /// `SET LOCAL search_path TO "t_…"`: the rest of the transaction reads and writes this
    /// schema only.
    var setLocalSearchPath: PostgresQuery { PostgresQuery(unsafeSQL: "SET LOCAL search_path TO \(self)") }

    /// `SET search_path TO "t_…"`: the connection reads and writes this schema only, until it is
    /// set again (a read client's connection, whose place its client remembers).
    var setSearchPath: PostgresQuery { PostgresQuery(unsafeSQL: "SET search_path TO \(self)") }
}
