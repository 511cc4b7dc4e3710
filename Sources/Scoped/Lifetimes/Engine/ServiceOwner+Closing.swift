import Synchronization

/// The closing of a scope: its built services taken out of its state and closed, newest first.
extension ServiceOwner {
    /// Ends the scope: closes every service it built, newest first, each told `outcome`, with
    /// `node`, the scope's own, current.
    ///
    /// A scope that built nothing returns without suspending, and, inlined into
    /// ``end(_:with:)``, without an async call.
    ///
    /// - Returns: the closes that threw; every close is attempted. `nil` when the scope had
    ///   closed already: only the first call closes, and later ones return at once.
    @inline(__always)
    nonisolated(nonsending) func close(
        _ outcome: ScopeOutcome,
        with node: ScopeNode
    ) async -> Closed? {
        guard let taken = takeBuiltServices() else { return nil }
        let (built, workAtEnd) = taken
        if built.isEmpty { return Closed(failures: [], workAtEnd: workAtEnd) }
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
        return Closed(failures: failures, workAtEnd: workAtEnd)
    }

    /// What closing a scope left to do: the closes that threw, and the work waiting for the
    /// scope's end.
    struct Closed {
        let failures: [ScopeCloseError.Failure]
        let workAtEnd: [HandedOffWork.Run]

        /// Starts or ends unstarted the work that waited for the scope's end: it ended with
        /// `outcome`, and committed when that is success and no close threw.
        nonisolated(nonsending) func startWorkAtEnd(outcome: ScopeOutcome) async {
            guard !workAtEnd.isEmpty else { return }
            let committed = outcome.isSuccess && failures.isEmpty
            for work in workAtEnd { await work.scopeEnded(committed: committed, outcome: outcome) }
        }
    }

    /// Keeps `work` to start, or end unstarted, once this scope has ended.
    ///
    /// - Returns: `false` when the scope is closing already: whether it commits is decided
    ///   without the work.
    func startAtEnd(_ work: HandedOffWork.Run) -> Bool {
        state.withLock { state in
            guard !isClosed.load(ordering: .relaxed) else { return false }
            state.workAtEnd.append(work)
            return true
        }
    }

    /// Marks the scope closed and takes the services it built out of its state.
    ///
    /// The entries move out (no copy): a closed scope keeps nothing, and a later read of its
    /// services is refused with `scopeEnded`. Empty when the scope built nothing; `nil` when it
    /// was closed already.
    ///
    /// The owner's closed state is the scope's one: set here, once, under the state's lock, it
    /// is what `Scope.isClosed` reads and what makes a second close return at once.
    private func takeBuiltServices() -> (SmallList<Entry>, [HandedOffWork.Run])? {
        state.withLock { state -> (SmallList<Entry>, [HandedOffWork.Run])? in
            guard !isClosed.load(ordering: .relaxed) else { return nil }
            isClosed.store(true, ordering: .releasing)
            var workAtEnd: [HandedOffWork.Run] = []
            if !state.workAtEnd.isEmpty { swap(&workAtEnd, &state.workAtEnd) }
            guard state.builtCount > 0 else { return (SmallList(), workAtEnd) }
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
            return (entries, workAtEnd)
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

    /// Closes a root's or a tenant's services, told success, with `node` (its own) current, once
    /// its scopes have ended, and gives the closes that threw to the root's close-error handler:
    /// what a root's shutdown and a tenant's close end with, which nothing can throw to.
    nonisolated(nonsending) func closeReportingFailures(with node: ScopeNode) async {
        // A root's and a tenant's own values keep no work for their end (`handOff` refuses it).
        let failures = await close(.success, with: node)?.failures ?? []
        if !failures.isEmpty {
            registry.onCloseError(ScopeCloseError(failures: failures, outcome: .success))
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
        // The first close of the scope ends it; any other returns here.
        guard let closed = await close(outcome, with: node) else { return }
        if registry.observers.observeScopes {
            registry.observers.scopeEnded(ScopedValues(node: node), outcome: outcome)
        }
        countClosed()
        // Counted open on the root since they were handed off, so the root cannot drain between.
        if !closed.workAtEnd.isEmpty { await closed.startWorkAtEnd(outcome: outcome) }
        let failures = closed.failures
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

/// Closes a scope's built services, newest first, each bounded by its close timeout (or by
/// itself) and reported to the root's observers; knows nothing of the scope's state.
enum ServiceCloser {
    /// Closes the built services among `entries`, newest first, with their scope current.
    ///
    /// - Returns: the closes that threw or were abandoned; every close is attempted.
    @inline(__always)
    nonisolated(nonsending) static func closeEach(
        of entries: SmallList<ServiceOwner.Entry>,
        outcome: ScopeOutcome,
        registry: ScopeRegistry
    ) async -> [ScopeCloseError.Failure] {
        var failures: [ScopeCloseError.Failure] = []
        // Newest first: by descending `order`, found by scanning the few entries, so closing
        // allocates nothing.
        var previous = Int.max
        while let (key, box, order) = Self.newest(in: entries, before: previous) {
            previous = order
            do {
                // A close that bounds itself runs inline: no task, no timer.
                if !key.closeBoundsItself, let timeout = key.closeTimeout ?? registry.closeTimeout {
                    let entry = key.name
                    // Bounded: a close that does not return is abandoned, and the scope ends.
                    try await DeadlineWatchdog.shared.run(
                        { try await Self.close(key, box, outcome: outcome, registry: registry) },
                        abandoningAfter: timeout
                    ) { ScopeCloseError.Timeout(entry: entry, timeout: timeout) }
                } else {
                    try await Self.close(key, box, outcome: outcome, registry: registry)
                }
            } catch {
                failures.append(ScopeCloseError.Failure(entry: key.name, error: error))
            }
        }
        return failures
    }

    /// Closes one service, inside the root's observers' `close`, if any.
    @inline(__always)
    nonisolated(nonsending) private static func close(
        _ key: any ScopedServiceKey.Type,
        _ box: AnyValueBox,
        outcome: ScopeOutcome,
        registry: ScopeRegistry
    ) async throws {
        guard !registry.observers.observeServices else {
            return try await registry.observers.close(key, outcome: outcome) {
                try await box.close(as: key, outcome: outcome)
            }
        }
        try await box.close(as: key, outcome: outcome)
    }

    /// The built entry with the largest `order` below `limit`, or `nil`.
    private static func newest(
        in entries: SmallList<ServiceOwner.Entry>,
        before limit: Int
    ) -> (key: any ScopedServiceKey.Type, box: AnyValueBox, order: Int)? {
        // A scope that built one service, the common case, has nothing to compare (and
        // nothing to copy a second time).
        if entries.count == 1 {
            guard limit == .max, case .built(let box, let key, let order) = entries[0].slot else { return nil }
            return (key, box, order)
        }
        var newest: (key: any ScopedServiceKey.Type, box: AnyValueBox, order: Int)?
        for entry in entries {
            guard case .built(let box, let key, let order) = entry.slot, order < limit else { continue }
            if order > (newest?.order ?? -1) { newest = (key, box, order) }
        }
        return newest
    }
}

extension ScopedServiceKey {
    /// A service stored type-erased, as a value of its own type.
    static func value(erased box: AnyValueBox) -> any Sendable {
        (box as! ValueBox<Value>).value
    }

    /// Closes a service stored type-erased, so a scope can close services of any key without
    /// keeping a closure per service.
    static func close(erased box: AnyValueBox, outcome: ScopeOutcome) async throws {
        try await close((box as! ValueBox<Value>).value, outcome: outcome)
    }
}
