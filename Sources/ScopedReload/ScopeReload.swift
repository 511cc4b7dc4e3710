import Scoped

/// What a reload of a ``ReloadableScopeRoot`` did: the generation it made current, the app
/// services carried over from the root it replaced, and those rebuilt, with why.
public struct ScopeReload: Sendable {
    /// An app service of the replaced root that the new root builds anew.
    public struct Rebuilt: Sendable, Hashable {
        /// The service's entry name (`sqliteDatabase`).
        public let service: String
        /// Why it could not be carried over: `sqliteConfiguration.readers changed`, or
        /// `sqliteDatabase was rebuilt` for a service that read one rebuilt.
        public let reason: String

        /// A service rebuilt for `reason`.
        public init(service: String, reason: String) {
            self.service = service
            self.reason = reason
        }
    }

    /// The generation now current: 1 for the first root, one more for each applied reload.
    public let generation: Int
    /// The app services the new root holds as the same instances the replaced root built,
    /// oldest first.
    public let carriedOver: [String]
    /// The app services the replaced root built that the new root builds anew, oldest first.
    public let rebuilt: [Rebuilt]
    /// The root replaced.
    ///
    /// Scopes open on it finish there; `ScopeRoot.shutdown(abandoningAfter:)`
    /// waits for them and then closes the app services it did not carry over, newest first.
    public let previous: ScopeRoot

    /// One line for a log: `rebuilt: sqliteDatabase (sqliteConfiguration.readers changed);
    /// carried over: postgresClient`, or `the replaced root had built no app service`.
    public var summary: String {
        var parts: [String] = []
        if !rebuilt.isEmpty {
            parts.append("rebuilt: " + rebuilt.map { "\($0.service) (\($0.reason))" }.joined(separator: ", "))
        }
        if !carriedOver.isEmpty { parts.append("carried over: " + carriedOver.joined(separator: ", ")) }
        return parts.isEmpty ? "the replaced root had built no app service" : parts.joined(separator: "; ")
    }
}

/// A reload that was rejected: the root that was current stays current, and nothing it holds
/// was touched.
public enum ScopeReloadError: Error, CustomStringConvertible {
    /// The new root failed validation: a service failed to build, a cycle, a captive
    /// dependency, a missing required object.
    case validationFailed([ScopeValidationError.Problem])
    /// Another reload of the same root was in progress.
    case reloadInProgress

    /// The reason, for a log line.
    public var description: String {
        switch self {
        case .validationFailed(let problems):
            "the new root failed validation: " + problems.map { "\($0)" }.joined(separator: "; ")
        case .reloadInProgress:
            "another reload of this root is in progress"
        }
    }
}
