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

extension ScopedValues {
    /// The scope these values belong to, which a child scope is opened in.
    ///
    /// - Throws: ``ScopedError/outsideRoot(entry:)`` outside every root and test scope.
    @usableFromInline
    func parentScope() throws(ScopedError) -> ServiceOwner {
        guard let scope else { throw ScopedError.outsideRoot(entry: nil) }
        return scope
    }

    /// A child lifetime scope of `parent`, these values' scope: a new scope context, and these
    /// values one level deeper, changed by `update`, bound to it.
    ///
    /// The caller closes the context.
    func childScope<Failure: Error>(
        of parent: ServiceOwner,
        _ update: (inout ScopedValues) throws(Failure) -> Void
    ) throws(Failure) -> (values: ScopedValues, context: ServiceOwner) {
        let context = ServiceOwner(childOf: parent)
        var values = child(scope: context)
        try update(&values)
        precondition(values.scope === context, "a scope's update sets its values; it does not replace them")
        values.node = values.node.asOwnNode()
        return (values, context)
    }

    /// ``childScope(_:)``, counted open on its root: what `withScope` and `Scope` run their
    /// work in.
    ///
    /// `countedInTenant`: the scope was counted open on its tenant already, as a tenant's
    /// directory counts the scope it opens the tenant for; if `update` throws, it is counted
    /// closed again.
    @usableFromInline
    func openChildScope<Failure: Error>(
        of parent: ServiceOwner,
        _ update: (inout ScopedValues) throws(Failure) -> Void,
        handedOffAt site: HandedOffWork.Site? = nil,
        countedInTenant: Bool = false
    ) throws(Failure) -> (values: ScopedValues, context: ServiceOwner) {
        let opened: (values: ScopedValues, context: ServiceOwner)
        do {
            opened = try childScope(of: parent, update)
        } catch {
            if countedInTenant { parent.owner(at: .tenant)?.openScopes?.closed() }
            throw error
        }
        let (values, context) = opened
        context.countOpened(inTenant: !countedInTenant)
        // Read through the registry, not copied out of it: a copy of the observers' lists
        // retains and releases each of them, on every scope, observed or not.
        if context.registry.observers.observeScopes {
            context.registry.observers.scopeOpened(values, handedOffAt: site)
        }
        return (values, context)
    }
}

extension ScopedValues {
    /// Whether these values belong to a scope opened on `root` (a request's, a job's; not the
    /// root itself, nor a scope of another root).
    ///
    /// An adapter layered behind another one's request scope on the same root (an OpenAPI
    /// middleware behind Hummingbird's) joins that scope instead of opening a sibling, so a
    /// request keeps one scope, one session and one transaction:
    ///
    /// ```swift
    /// if ScopedValues.current.isInRequestScope(of: root) {
    ///     return try await next(request)  // the outer adapter's scope
    /// }
    /// ```
    public func isInRequestScope(of root: ScopeRoot) -> Bool {
        guard let scope, scope.level == .scope else { return false }
        return scope.root === root.context
    }
}

extension ServiceOwner {
    /// Counts this scope, just opened, open on its root, and on its tenant when `inTenant`.
    func countOpened(inTenant: Bool) {
        guard level == .scope, let parent else { return }
        if parent.level == .tenant {
            if inTenant { parent.openScopes?.opened() }
            parent.parent?.openScopes?.opened()
        } else {
            parent.openScopes?.opened()
        }
    }
}
