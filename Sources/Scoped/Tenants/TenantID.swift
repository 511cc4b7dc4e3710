/// The identity of a tenant: 1 to 63 characters from `a-z`, `0-9` and `-`.
///
/// The rule of a DNS label, so that an ID is safe wherever a tenant's resources are named by
/// it: a file name (`acme.sqlite`), a PostgreSQL schema, a host name, a metric's value. An ID
/// parsed from a request is checked here, once, before anything is opened for it:
///
/// ```swift
/// guard let tenant = TenantID(request.headers[tenantHeader] ?? "") else {
///     throw HTTPError(.badRequest, message: "X-Tenant must be 1 to 63 characters from a-z, 0-9 and -")
/// }
/// ```
public struct TenantID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The ID as it was given.
    public let rawValue: String

    /// The ID `rawValue`, or `nil` when it is empty, longer than 63 characters, or holds a
    /// character other than `a-z`, `0-9` and `-`.
    public init?(_ rawValue: String) {
        let bytes = rawValue.utf8
        guard (1...63).contains(bytes.count),
            bytes.allSatisfy({ (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D })
        else { return nil }
        self.rawValue = rawValue
    }

    /// The ID itself.
    public var description: String { rawValue }

    /// Orders IDs by their characters.
    public static func < (lhs: TenantID, rhs: TenantID) -> Bool { lhs.rawValue < rhs.rawValue }
}
