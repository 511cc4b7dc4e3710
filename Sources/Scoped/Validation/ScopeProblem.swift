/// A problem ``ScopeRoot/validate(scope:)`` found, named so a server can refuse to start with
/// a message that says what to fix.
public struct ScopeProblem: Hashable, Sendable, Codable, CustomStringConvertible {
    /// What kind of problem it is.
    public enum Kind: String, Hashable, Sendable, Codable {
        /// A type-keyed object the root requires is set neither on the root nor when a scope opens.
        case missingRequirement
        /// A service needs itself while it is being built.
        case cycle
        /// An app service reads a scope service while it is being built.
        case captiveDependency
        /// A service's construction threw.
        case constructionFailed
        /// A service threw while its scope closed.
        case closeFailed
        /// The update that opens a scope threw.
        case scopeFailed
    }

    /// What kind of problem it is.
    public let kind: Kind
    /// The entry, service or type the problem is about.
    public let entry: String
    /// What went wrong and how to fix it.
    public let message: String

    /// A description for logs and error messages.
    public var description: String { "\(entry): \(message)" }

    init(kind: Kind, entry: String, message: String) {
        self.kind = kind
        self.entry = entry
        self.message = message
    }

    init(entry: String, error: any Error) {
        let kind: Kind =
            switch error as? ScopedError {
            case .cycle: .cycle
            case .captiveDependency: .captiveDependency
            default: .constructionFailed
            }
        self.init(kind: kind, entry: entry, message: String(describing: error))
    }
}

/// A root failed ``ScopeRoot/validate(scope:)``: the problems that keep it from serving.
///
/// Its description lists every problem, one a line, ready for a log or standard error.
public struct ScopeValidationError: Error, CustomStringConvertible {
    /// What validation found, in the order it found it; never empty.
    public var problems: [ScopeProblem]

    /// Creates the error for `problems`, which must not be empty.
    public init(problems: [ScopeProblem]) {
        precondition(!problems.isEmpty, "a validation error needs at least one problem")
        self.problems = problems
    }

    /// "The application root is not sound; refusing to start:" and a line per problem.
    public var description: String {
        (["The application root is not sound; refusing to start:"] + problems.map { "  - \($0)" })
            .joined(separator: "\n")
    }
}
