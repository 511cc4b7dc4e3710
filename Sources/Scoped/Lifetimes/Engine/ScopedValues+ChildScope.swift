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
        label: @autoclosure () -> String? = nil,
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
        if context.registry.observers.observeScopes { context.registry.observers.scopeOpened() }
        context.countOpened(inTenant: !countedInTenant)
        if let openWork = context.registry.observer?.openWork {
            openWork.opened(context, values: values, label: label())
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
