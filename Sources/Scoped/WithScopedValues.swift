/// Runs `operation` in a scope whose values are the current ones changed by `update`.
///
/// The changes are seen by `operation`, everything it calls and every child task it starts,
/// and by nothing else: siblings and the caller keep the values they had.
///
/// ```swift
/// let title = withScopedValues({ $0.copyright = "© Request" }) {
///     ScopedValues.current.copyright
/// }
/// ```
@inlinable
public func withScopedValues<R>(
    _ update: (inout ScopedValues) throws -> Void,
    operation: () throws -> R
) rethrows -> R {
    var values = ScopedValues.currentChild()
    try update(&values)
    return try ScopedValues.taskLocalNode.withValue(values.node, operation: operation)
}

/// Runs the asynchronous `operation` in a scope whose values are the current ones changed by `update`.
///
/// The changes are seen by `operation`, everything it awaits and every child task it starts
/// (`async let`, task groups, `Task {}`), and by nothing else.
@inlinable
nonisolated(nonsending) public func withScopedValues<R>(
    _ update: (inout ScopedValues) throws -> Void,
    operation: () async throws -> R
) async rethrows -> R {
    var values = ScopedValues.currentChild()
    try update(&values)
    return try await ScopedValues.taskLocalNode.withValue(values.node, operation: operation)
}

/// Runs `operation` with `values` as the current scope.
///
/// This carries a captured scope into work that does not inherit it, such as `Task.detached`
/// or a callback run by another library:
///
/// ```swift
/// let values = ScopedValues.current
/// Task.detached {
///     withScopedValues(values) { audit.record() }
/// }
/// ```
@inlinable
public func withScopedValues<R>(_ values: ScopedValues, operation: () throws -> R) rethrows -> R {
    try ScopedValues.taskLocalNode.withValue(values.node, operation: operation)
}

/// Runs the asynchronous `operation` with `values` as the current scope.
@inlinable
nonisolated(nonsending) public func withScopedValues<R>(
    _ values: ScopedValues,
    operation: () async throws -> R
) async rethrows -> R {
    try await ScopedValues.taskLocalNode.withValue(values.node, operation: operation)
}

extension ScopedValues {
    /// The values of a child scope of these: one level deeper, in `scope` (or in this scope),
    /// marking the values set through them as set at that depth.
    @inlinable
    func child(scope: ServiceOwner? = nil) -> ScopedValues {
        ScopedValues(node: node.child(scope: scope ?? node.scope))
    }

    /// The values of a child scope of the current one, made without copying the current
    /// values first.
    @inlinable
    static func currentChild() -> ScopedValues {
        withCurrent { $0.child() }
    }
}
