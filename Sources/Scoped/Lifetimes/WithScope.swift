/// Runs `operation` in a new scope, child of the current one, that owns the
/// ``ScopedLifetime/scope`` services built in it and closes them when the operation ends.
///
/// Unlike ``withScopedValues(_:operation:)-1xu3d``, which only changes values, this
/// opens a lifetime scope: a request, a job, a unit of work. It needs an application root:
/// call it inside a scope of a ``ScopeRoot`` or a test scope, or call the root's own
/// ``ScopeRoot/withScope(_:operation:)``.
///
/// - Throws: what `operation` throws; or, when it returned but a service failed to close,
///   a ``ScopeCloseError``; ``ScopedError/outsideRoot(entry:)`` outside every root.
@inlinable
nonisolated(nonsending) public func withScope<R>(
    _ update: (inout ScopedValues) throws -> Void = { _ in },
    operation: () async throws -> R
) async throws -> R {
    try await runInChildScope(on: .current, update: update, operation: operation)
}

/// Opens a child scope of `parent`'s scope, runs `operation` in it and closes it.
///
/// Inlinable, so that it is specialized for `R` where it is called: unspecialized, the result
/// held while the scope closes is a task allocation of its own.
@inlinable
nonisolated(nonsending) func runInChildScope<R>(
    on parent: ScopedValues,
    update: (inout ScopedValues) throws -> Void,
    operation: () async throws -> R
) async throws -> R {
    let (values, context) = try parent.openChildScope(of: try parent.parentScope(), update)
    return try await runInOpenScope(values, context, operation: operation)
}

/// Runs `operation` in the scope just opened, `values` bound to `context`, and ends the scope
/// with the operation's outcome.
@inlinable
nonisolated(nonsending) func runInOpenScope<R>(
    _ values: ScopedValues,
    _ context: ServiceOwner,
    operation: () async throws -> R
) async throws -> R {
    // The services close inside the scope's binding, so they need no binding of their own.
    try await ScopedValues.taskLocalNode.withValue(
        values.node,
        operation: {
            let result: R
            do {
                result = try await operation()
            } catch {
                try? await context.end(ScopeOutcome(endingWith: error), with: values.node)
                throw error
            }
            try await context.end(.success, with: values.node)
            return result
        }
    )
}
