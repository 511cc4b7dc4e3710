extension ScopeRoot {
    /// Which service read which while it was built on this root and its scopes, with each
    /// service's lifetime and the reads refused as cycles or captive dependencies.
    ///
    /// Validation builds every registered service, so call it after ``validate(scope:)`` for
    /// the whole picture; services first built later appear once they are built.
    public func dependencyGraph() -> DependencyGraph {
        context.registry.dependencies.graph(
            registered: context.registry.services.map { DependencyGraph.Service(name: $0.name, lifetime: $0.lifetime) }
        )
    }
}
