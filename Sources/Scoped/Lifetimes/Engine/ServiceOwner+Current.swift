/// Finding a scope's node among the calling task's, binding it where it is not.
extension ServiceOwner {
    /// Whether `node` is the calling task's current node, read in place.
    static func isCurrent(_ node: ScopeNodeBuffer) -> Bool {
        ScopedValues.withCurrent { $0.node.buffer === node }
    }

    /// Whether `node` is the calling task's current node; `nil` when there is no node.
    static func isCurrent(_ node: borrowing ScopeNodeBuffer?) -> Bool? {
        switch node {
        case .some(let node): isCurrent(node)
        case .none: nil
        }
    }

    /// Runs `body` with `node` as the current scope's values; `nil` means it is already.
    ///
    /// Constructions and closes see the scope they belong to. Where `node` is already current
    /// (a service read, or closed by `withScope`, inside its own scope: the common case) no
    /// task-local is pushed.
    nonisolated(nonsending) static func withCurrent<R>(
        _ node: ScopeNode?,
        _ body: () async throws -> R
    ) async throws -> R {
        guard let node, !isCurrent(node.buffer) else { return try await body() }
        return try await ScopedValues.taskLocalNode.withValue(node, operation: body)
    }
}
