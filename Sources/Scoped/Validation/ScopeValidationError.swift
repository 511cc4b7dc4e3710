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
