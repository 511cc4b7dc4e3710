import Synchronization

/// How a root counts the scopes opened on it, and waits for them to close.
extension ScopeContext {
    /// Counts a scope opened on this root.
    package func scopeOpened() {
        #if Instrumentation
        registry.instruments?.scopeOpened()
        #endif
        openScopes?.opened()
    }

    /// Counts a scope on this root as closed, waking whoever waits for the root to drain.
    package func scopeClosed() {
        openScopes?.closed()
    }

    /// The number of scopes opened on this root and not yet closed.
    package var openScopeCount: Int { openScopes?.count ?? 0 }

    /// Returns once every scope opened on this root has closed, and every scope of the roots
    /// it carried services over from.
    package func drain() async {
        await openScopes?.drained()
        for predecessor in state.withLock({ $0.predecessors }) { await predecessor.drained() }
    }

    /// The open scopes of this root and of its predecessors, those not drained yet.
    var undrainedScopes: [OpenScopes] {
        ((openScopes.map { [$0] } ?? []) + state.withLock { $0.predecessors }).filter { $0.count > 0 }
    }
}
