extension ScopedValues {
    /// A child lifetime scope of these values' scope (of the implicit root outside any scope): a new scope context, and
    /// these values one level deeper, changed by `update`, bound to it.
    ///
    /// The caller closes the context.
    func childScope<Failure: Error>(_ update: (inout ScopedValues) throws(Failure) -> Void) throws(Failure) -> (
        values: ScopedValues, context: ScopeContext
    ) {
        let context = ScopeContext(childOf: scope ?? ScopeRoot.implicit.context)
        var values = child(scope: context)
        try update(&values)
        context.attach(values.node)
        return (values, context)
    }

    /// ``childScope(_:)``, counted open on its root: what `withScope` and `Scope` run their
    /// work in.
    @usableFromInline
    func openChildScope<Failure: Error>(
        _ update: (inout ScopedValues) throws(Failure) -> Void,
        label: String? = nil
    ) throws(Failure) -> (values: ScopedValues, context: ScopeContext) {
        let (values, context) = try childScope(update)
        context.root.scopeOpened()
        context.registry.observer?.openWork?.opened(context, values: values, label: label)
        return (values, context)
    }
}
