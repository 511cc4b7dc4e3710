import Synchronization

/// A scope that owns services: an application root, or a scope opened with `withScope`.
///
/// It builds each service once, on first use, shares one construction among concurrent first
/// readers, and closes what it built, in reverse order, when it ends.
package final class ScopeContext: Sendable {
    private enum Slot {
        case building([CheckedContinuation<AnyValueBox, any Error>])
        case built(AnyValueBox)
    }

    private struct BuiltService: Sendable {
        let name: String
        let close: @Sendable (ScopeOutcome) async throws -> Void
    }

    private struct State: ~Copyable {
        var slots: [ObjectIdentifier: Slot] = [:]
        /// Built services in the order their construction finished.
        var built: [BuiltService] = []
        var isClosed = false
        /// For a root: scopes opened on it and not yet closed, and who waits for them to drain.
        var openScopes = 0
        var drainWaiters: [CheckedContinuation<Void, Never>] = []
    }

    /// Thrown inside the cache when a construction this reader waited for failed before it
    /// could register; the reader starts over.
    private struct Retry: Error {}

    /// How many scopes were opened below the root to reach this one; 0 for a root.
    package let depth: Int
    /// ``ScopedLifetime/app`` for a root, ``ScopedLifetime/scope`` for a scope opened on one.
    package let lifetime: ScopedLifetime
    /// What the root registered: services, requirements, variants.
    package let registry: ScopeRegistry
    /// The root this scope belongs to, or `nil` when this is the root.
    private let parentRoot: ScopeContext?
    /// The entries set when the scope opened; services are built with these values.
    private let openingOverrides: OverrideTable
    private let state = Mutex(State())

    package init(root registry: ScopeRegistry, overrides: OverrideTable) {
        self.depth = 0
        self.lifetime = .app
        self.registry = registry
        self.parentRoot = nil
        self.openingOverrides = overrides
    }

    package init(childOf parent: ScopeContext, depth: Int, overrides: OverrideTable) {
        self.depth = depth
        self.lifetime = .scope
        self.registry = parent.registry
        self.parentRoot = parent.root
        self.openingOverrides = overrides
    }

    /// The application root this scope belongs to.
    package var root: ScopeContext { parentRoot ?? self }

    /// The values services of this scope are built and closed with.
    package var values: ScopedValues {
        var values = ScopedValues()
        values.overrides = openingOverrides
        values.depth = depth
        values.origin = depth == 0 ? .root : .override(depth: depth)
        values.scope = self
        return values
    }

    /// Whether the service for `key` has been built in this scope.
    package func isBuilt(_ key: ObjectIdentifier) -> Bool {
        state.withLock { state in
            if case .built = state.slots[key] { return true }
            return false
        }
    }

    /// The service for `K`, built now if this scope has not built it yet.
    package func service<K: ScopedServiceKey>(_ key: K.Type) async throws -> K.Value {
        let id = ObjectIdentifier(key)
        if let box = state.withLock({ state -> AnyValueBox? in
            if case .built(let box) = state.slots[id] { return box }
            return nil
        }) {
            return unsafeDowncast(box, to: ValueBox<K.Value>.self).value
        }
        let link = ConstructionChain.Link(key: id, name: K.name, lifetime: K.lifetime)
        let chain = ConstructionChain.current
        try chain.check(link)
        while true {
            let shouldBuild = try state.withLock { state -> Bool in
                if state.slots[id] != nil { return false }
                if state.isClosed { throw ScopedError.scopeEnded(entry: K.name) }
                state.slots[id] = .building([])
                return true
            }
            if shouldBuild {
                return try await build(key, chain: chain.appending(link))
            }
            do {
                let box = try await withCheckedThrowingContinuation { continuation in
                    let ready: Result<AnyValueBox, any Error>? = state.withLock { state in
                        switch state.slots[id] {
                        case .built(let box):
                            return .success(box)
                        case .building(var waiters):
                            waiters.append(continuation)
                            state.slots[id] = .building(waiters)
                            return nil
                        case nil:
                            return .failure(Retry())
                        }
                    }
                    if let ready { continuation.resume(with: ready) }
                }
                return unsafeDowncast(box, to: ValueBox<K.Value>.self).value
            } catch is Retry {
                continue
            }
        }
    }

    private func build<K: ScopedServiceKey>(_ key: K.Type, chain: ConstructionChain) async throws -> K.Value {
        let id = ObjectIdentifier(key)
        let value: K.Value
        do {
            value = try await ConstructionChain.$current.withValue(chain) {
                try await withScopedValues(values) { try await K.makeValue() }
            }
        } catch {
            let waiters = state.withLock { state in
                defer { state.slots[id] = nil }
                if case .building(let waiters) = state.slots[id] { return waiters }
                return []
            }
            for waiter in waiters { waiter.resume(throwing: error) }
            throw error
        }
        let box = ValueBox(value, name: K.name, kind: EntryKind(K.lifetime), origin: .default)
        let service = BuiltService(name: K.name) { outcome in try await K.close(value, outcome: outcome) }
        let (waiters, isClosed) = state.withLock { state in
            var waiters: [CheckedContinuation<AnyValueBox, any Error>] = []
            if case .building(let building) = state.slots[id] { waiters = building }
            if state.isClosed {
                state.slots[id] = nil
            } else {
                state.slots[id] = .built(box)
                state.built.append(service)
            }
            return (waiters, state.isClosed)
        }
        if isClosed {
            // The scope ended while this service was being built: close it now so nothing leaks.
            let error = ScopedError.scopeEnded(entry: K.name)
            try? await withScopedValues(values) { try await service.close(.cancelled) }
            for waiter in waiters { waiter.resume(throwing: error) }
            throw error
        }
        for waiter in waiters { waiter.resume(returning: box) }
        return value
    }

    /// Ends the scope: closes every service it built, newest first, each told `outcome`.
    ///
    /// - Returns: the closes that threw; every close is attempted.
    package func close(_ outcome: ScopeOutcome) async -> [ScopeCloseError.Failure] {
        let built = state.withLock { state in
            state.isClosed = true
            defer { state.built = [] }
            return state.built
        }
        var failures: [ScopeCloseError.Failure] = []
        for service in built.reversed() {
            do {
                try await withScopedValues(values) { try await service.close(outcome) }
            } catch {
                failures.append(ScopeCloseError.Failure(entry: service.name, error: error))
            }
        }
        return failures
    }

    /// Counts a scope opened on this root.
    package func scopeOpened() {
        state.withLock { $0.openScopes += 1 }
    }

    /// Counts a scope on this root as closed, waking whoever waits for the root to drain.
    package func scopeClosed() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.openScopes -= 1
            guard state.openScopes == 0 else { return [] }
            defer { state.drainWaiters = [] }
            return state.drainWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// The number of scopes opened on this root and not yet closed.
    package var openScopeCount: Int { state.withLock { $0.openScopes } }

    /// Returns once every scope opened on this root has closed.
    package func drain() async {
        await withCheckedContinuation { continuation in
            let drained = state.withLock { state in
                if state.openScopes == 0 { return true }
                state.drainWaiters.append(continuation)
                return false
            }
            if drained { continuation.resume() }
        }
    }
}
