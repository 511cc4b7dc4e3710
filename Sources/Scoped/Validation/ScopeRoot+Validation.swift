extension ScopeRoot {
    /// Checks the root before it serves: builds every registered app service, opens a synthetic
    /// scope with `update`, builds every registered scope service in it, checks every required
    /// object, and closes the scope as ``ScopeOutcome/cancelled``.
    ///
    /// Call it before binding a port and refuse to start when it returns problems:
    ///
    /// ```swift
    /// let problems = await root.validate()
    /// guard problems.isEmpty else {
    ///     for problem in problems { logger.critical("\(problem)") }
    ///     exit(1)
    /// }
    /// ```
    ///
    /// In a root created inside a test scope, validation builds no service: a test's overrides
    /// usually leave the live services unread (a mock repository never reads the database), and
    /// building them would connect to what the test replaced. Requirements are still checked, and
    /// each service is checked for cycles and captive dependencies when the test first reads it.
    ///
    /// - Parameter update: what a request scope sets when it opens (a request ID, a principal),
    ///   so that requirements met per request are not reported as missing.
    /// - Returns: every problem found, in the order services are registered; empty when the
    ///   root is sound.
    public func validate(scope update: (inout ScopedValues) throws -> Void = { _ in }) async -> [ScopeValidationError
        .Problem]
    {
        var problems: [ScopeValidationError.Problem] = []
        func record(_ problem: ScopeValidationError.Problem) {
            if !problems.contains(problem) { problems.append(problem) }
        }
        let registry = context.registry
        // A test reads what it uses, and each read is checked as it builds.
        let services = values.isTestScope ? [] : registry.services
        for service in services where service.lifetime == .app {
            do {
                try await service.resolve(values)
            } catch {
                record(ScopeValidationError.Problem(entry: service.name, error: error))
            }
        }
        let scopeValues: ScopedValues
        let scope: ServiceOwner
        do {
            (scopeValues, scope) = try values.childScope(of: context, update)
        } catch {
            record(
                ScopeValidationError.Problem(
                    kind: .scopeFailed,
                    entry: "scope",
                    message: "Opening a scope threw: \(error)"
                )
            )
            return problems
        }
        for requirement in registry.requirements where !requirement.isSatisfied(scopeValues) {
            record(
                ScopeValidationError.Problem(
                    kind: .missingRequirement,
                    entry: requirement.name,
                    message: ScopedError.missingObject(type: requirement.name).description
                )
            )
        }
        for service in services where service.lifetime == .scope {
            do {
                try await service.resolve(scopeValues)
            } catch {
                record(ScopeValidationError.Problem(entry: service.name, error: error))
            }
        }
        let closed = await scope.close(.cancelled, with: scopeValues.node)
        // Work a validated build handed off for after the scope ends: the scope did not commit.
        await closed?.startWorkAtEnd(outcome: .cancelled)
        for failure in closed?.failures ?? [] {
            record(
                ScopeValidationError.Problem(
                    kind: .closeFailed,
                    entry: failure.entry,
                    message: "Closing threw: \(failure.error)"
                )
            )
        }
        return problems
    }
}

extension ScopeValidationError {
    /// A problem ``ScopeRoot/validate(scope:)`` found, named so a server can refuse to start with
    /// a message that says what to fix.
    public struct Problem: Hashable, Sendable, Codable, CustomStringConvertible {
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
}

/// A root failed ``ScopeRoot/validate(scope:)``: the problems that keep it from serving.
///
/// Its description lists every problem, one a line, ready for a log or standard error.
public struct ScopeValidationError: Error, CustomStringConvertible {
    /// What validation found, in the order it found it; never empty.
    public var problems: [ScopeValidationError.Problem]

    /// Creates the error for `problems`, which must not be empty.
    public init(problems: [ScopeValidationError.Problem]) {
        precondition(!problems.isEmpty, "a validation error needs at least one problem")
        self.problems = problems
    }

    /// "The application root is not sound; refusing to start:" and a line per problem.
    public var description: String {
        (["The application root is not sound; refusing to start:"] + problems.map { "  - \($0)" })
            .joined(separator: "\n")
    }
}
