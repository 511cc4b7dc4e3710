import Synchronization

/// The closing of a scope: its built services taken out of its state and closed, newest first.
extension ServiceOwner {
    /// Ends the scope: closes every service it built, newest first, each told `outcome`, with
    /// `node`, the scope's own, current.
    ///
    /// A scope that built nothing returns without suspending, and, inlined into
    /// ``end(_:with:)``, without an async call.
    ///
    /// - Returns: the closes that threw; every close is attempted.
    @inline(__always)
    nonisolated(nonsending) func close(_ outcome: ScopeOutcome, with node: ScopeNode) async -> [ScopeCloseError.Failure]
    {
        let built = takeBuiltServices()
        if built.isEmpty { return [] }
        let failures = await close(built, in: node, outcome: outcome)
        // Only a root is watched; a request's scope skips the lock.
        if let root = rootContext, case let watchers = root.state.withLock({ $0.closeWatchers }),
            !watchers.isEmpty
        {
            for entry in built {
                guard case .built(let box, let key, _) = entry.slot else { continue }
                let value = key.value(erased: box)
                for watcher in watchers { watcher(value) }
            }
        }
        return failures
    }

    /// Marks the scope closed and takes the services it built out of its state.
    ///
    /// The entries move out (no copy): a closed scope keeps nothing, and a later read of its
    /// services is refused with `scopeEnded`. Empty when the scope built nothing, or was closed.
    private func takeBuiltServices() -> SmallList<Entry> {
        state.withLock { state -> SmallList<Entry> in
            guard !isClosed.load(ordering: .relaxed) else { return SmallList() }
            isClosed.store(true, ordering: .releasing)
            guard state.builtCount > 0 else { return SmallList() }
            var entries = SmallList<Entry>()
            swap(&entries, &state.entries)
            // Constructions still in flight stay: their builders wake their waiters when they
            // finish, and find the scope closed. (Built entries stay until the scope closes, so
            // there are some only when there are more entries than services built.)
            if entries.count > state.builtCount {
                for entry in entries {
                    if case .building = entry.slot { state.entries.append(entry) }
                }
            }
            // A root leaves what a reload carried over to or from it to the root that closes it.
            if let root = rootContext, case let notClosed = root.state.withLock({ $0.notClosed }),
                !notClosed.isEmpty
            {
                entries = SmallList(entries.filter { !notClosed.contains($0.id) })
            }
            return entries
        }
    }

    /// Closes the built services among `entries`, newest first, with `node` current.
    ///
    /// Closed by `withScope` inside the scope's own binding, they need no binding of their
    /// own; closed from elsewhere (`Scope.close`, a root's shutdown), one binding serves them
    /// all.
    @inline(__always)
    nonisolated(nonsending) private func close(
        _ entries: SmallList<Entry>,
        in node: ScopeNode,
        outcome: ScopeOutcome
    ) async -> [ScopeCloseError.Failure] {
        let registry = registry
        if Self.isCurrent(node.buffer) {
            return await ServiceCloser.closeEach(of: entries, outcome: outcome, registry: registry)
        }
        return await ScopedValues.taskLocalNode.withValue(node) {
            await ServiceCloser.closeEach(of: entries, outcome: outcome, registry: registry)
        }
    }

    /// Ends a scope opened on a root: closes its services with `outcome`, `node` (the scope's
    /// own) current, and counts it closed.
    ///
    /// A scope that built nothing ends without suspending, and without an async call.
    ///
    /// Close failures are thrown only when `outcome` is success, so that work whose services
    /// did not close cleanly (a transaction that did not commit) never reports success; other
    /// outcomes already carry an error of their own, and their failures go to the root's
    /// close-error handler.
    @usableFromInline
    nonisolated(nonsending) func end(_ outcome: ScopeOutcome, with node: ScopeNode) async throws(ScopeCloseError) {
        let failures = await close(outcome, with: node)
        if registry.observers.observeScopes { registry.observers.scopeEnded(outcome) }
        countClosed()
        registry.observer?.openWork?.closed(self)
        guard !failures.isEmpty else { return }
        let error = ScopeCloseError(failures: failures, outcome: outcome)
        guard outcome.isSuccess else { return registry.onCloseError(error) }
        throw error
    }

    /// Counts this scope closed on its root and its tenant, waking whoever waits for either to
    /// drain, as ``countOpened(inTenant:)`` counted it open.
    private func countClosed() {
        guard level == .scope, let parent else { return }
        parent.openScopes?.closed()
        if parent.level == .tenant { parent.parent?.openScopes?.closed() }
    }
}
