/// How long a service's value lives, and which scope owns it.
public enum ScopedLifetime: String, Hashable, Sendable, Codable, CustomStringConvertible {
    /// Built once per application root, on first use, and closed when the root shuts down.
    case app
    /// Built once per scope opened with `withScope`, on first use in it, and closed when that
    /// scope ends, told how it ended.
    case scope

    /// A description for logs and error messages.
    public var description: String { rawValue }
}
