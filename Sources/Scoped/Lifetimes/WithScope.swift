/// Runs `operation` in a new scope, child of the current one, that owns the
/// ``ScopedLifetime/scope`` services built in it and closes them when the operation ends.
///
/// Unlike ``withScopedValues(_:isolation:operation:)-((ScopedValues)->Void,_,_)``, which only changes values, this
/// opens a lifetime scope: a request, a job, a unit of work. Outside any scope, the new scope
/// is a child of a process-wide implicit root.
///
/// - Throws: what `operation` throws; or, when it returned but a service failed to close,
///   a ``ScopeCloseError``.
public func withScope<R>(
    _ update: (inout ScopedValues) throws -> Void = { _ in },
    isolation: isolated (any Actor)? = #isolation,
    operation: () async throws -> R
) async throws -> R {
    try await runInChildScope(on: .current, update: update, isolation: isolation, operation: operation)
}

/// Opens a child scope of `parent`'s scope, runs `operation` in it and closes it.
func runInChildScope<R>(
    on parent: ScopedValues,
    update: (inout ScopedValues) throws -> Void,
    isolation: isolated (any Actor)?,
    operation: () async throws -> R
) async throws -> R {
    let (values, context) = try parent.childScope(update)
    context.root.scopeOpened()
    // The services close inside the scope's binding, so they need no binding of their own.
    return try await ScopedValues.$taskLocalNode.withValue(
        values.node,
        operation: {
            let result: R
            do {
                result = try await operation()
            } catch {
                try? await context.end(ScopeOutcome(endingWith: error))
                throw error
            }
            try await context.end(.success)
            return result
        },
        isolation: isolation
    )
}
