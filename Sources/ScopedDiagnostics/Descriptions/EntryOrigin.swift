/// Where the value an entry has in a scope came from.
public enum EntryOrigin: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The key's default value: nothing set the entry.
    case `default`
    /// Set in code when the application root was built.
    case root
    /// Chosen by configuration when the application root was built (a named variant or a value).
    case configuration
    /// Set by a scope opened below the root; `depth` 1 is a request scope opened on the root.
    case override(depth: Int)

    /// A description for logs and error messages.
    public var description: String {
        switch self {
        case .default: "default"
        case .root: "root"
        case .configuration: "configuration"
        case .override(let depth): "override at depth \(depth)"
        }
    }
}
