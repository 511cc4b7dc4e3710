import Synchronization

/// A root's open tenants: opens one on the first scope that needs it, evicts idle ones, and
/// closes each evicted tenant's services once its scopes have ended.
///
/// One lock guards the table: a tenant is found, opened or evicted under it, and its count of
/// open scopes is raised under it when a scope is opened for it. So a tenant with an open
/// scope is never evicted, and a scope never opens on an evicted tenant. Scopes nested in a
/// tenant's scope (a `withScope`, handed-off work) count themselves without the lock: their
/// tenant has a scope open while they open.
final class TenantDirectory: Sendable {
    /// An open tenant: its context, which owns its services, and its values, which its scopes
    /// start from.
    struct Tenant: Sendable {
        let context: ScopeContext
        let values: ScopedValues
    }

    private struct State {
        var open: [TenantID: Tenant] = [:]
        /// The close of each evicted tenant whose services are still closing: the latest, by ID.
        ///
        /// The tenant's next instance builds nothing before it ends, so that a tenant's file is
        /// never opened while its previous instance is still closing it.
        var closing: [TenantID: (number: Int, task: Task<Void, Never>)] = [:]
        /// How many closes have started: the next one's number.
        var closes = 0
        var evicted = 0
        /// Evicts idle tenants while any is open and the tenancy has an idle timeout.
        var sweeper: Task<Void, Never>?
        var isShutDown = false
    }

    let tenancy: Tenancy
    private let registry: ScopeRegistry
    private let state = Mutex(State())

    init(tenancy: Tenancy, registry: ScopeRegistry) {
        self.tenancy = tenancy
        self.registry = registry
    }

    /// The tenant `id` of `root`, opened with `rootValues` under its own if it is not open,
    /// with one more scope counted open on it: the caller opens that scope.
    ///
    /// - Throws: ``ScopedError/tenantCapacity(limit:)`` when ``Tenancy/maximumOpen`` tenants
    ///   are open and each has a scope open; what ``Tenancy/configure`` throws;
    ///   ``ScopedError/scopeEnded(entry:)`` once the root has shut down.
    func acquire(_ id: TenantID, root: ScopeContext, rootValues: ScopedValues) throws -> Tenant {
        try state.withLock { state in
            guard !state.isShutDown else { throw ScopedError.scopeEnded(entry: "tenant \(id)") }
            if let tenant = state.open[id] {
                tenant.context.openScopes?.opened()
                return tenant
            }
            let context = ScopeContext(tenant: id, of: root, after: state.closing[id]?.task)
            // A base of its own, so that a read in a tenant's scope probes at most two tables.
            var values = ScopedValues(node: rootValues.node.flattened(depth: 1, scope: context))
            try tenancy.configure(id, &values)
            if let limit = tenancy.maximumOpen, state.open.count >= limit {
                guard let idlest = Self.leastRecentlyUsedIdle(in: state.open) else {
                    throw ScopedError.tenantCapacity(limit: limit)
                }
                evict(idlest, from: &state)
            }
            context.attach(values.node)
            context.openScopes?.opened()
            let tenant = Tenant(context: context, values: values)
            state.open[id] = tenant
            startSweeping(&state)
            registry.tenantCountChanged(open: state.open.count)
            return tenant
        }
    }

    /// How many tenants are open, and how many were evicted.
    var statistics: TenantStatistics {
        state.withLock { TenantStatistics(open: $0.open.count, evicted: $0.evicted) }
    }

    /// Evicts the tenant `id` now, whatever its open scopes, and waits until its services have
    /// closed: after its open scopes, and the work handed off from them, have ended.
    ///
    /// - Returns: whether the tenant was open.
    func evict(_ id: TenantID) async -> Bool {
        let closing = state.withLock { state -> Task<Void, Never>? in
            guard state.open[id] != nil else { return nil }
            evict(id, from: &state)
            return state.closing[id]?.task
        }
        guard let closing else { return false }
        await closing.value
        return true
    }

    /// Evicts every tenant, then waits for every tenant's services to close.
    ///
    /// For a root that shuts down, once its scopes have drained; later scopes of a tenant are
    /// refused.
    func shutdown() async {
        let closing = state.withLock { state -> [Task<Void, Never>] in
            state.isShutDown = true
            state.sweeper?.cancel()
            state.sweeper = nil
            for id in state.open.keys { close(state.open.removeValue(forKey: id)!, in: &state) }
            registry.tenantCountChanged(open: 0)
            return state.closing.values.map(\.task)
        }
        for task in closing { await task.value }
    }

    /// Forgets every open tenant without closing its services, for a root discarded without
    /// shutting down: breaks each tenant's cycle with its node.
    func detach() {
        state.withLock { state in
            state.sweeper?.cancel()
            for tenant in state.open.values { tenant.context.detach() }
            state.open = [:]
        }
    }

    /// Evicts the tenants that have had no scope open for the tenancy's idle timeout.
    ///
    /// - Returns: whether a tenant is still open, so sweeping goes on.
    private func sweep(idleTimeout: Duration) -> Bool {
        let now = NanosecondClock.nanoseconds()
        let timeout = NanosecondClock.nanoseconds(idleTimeout)
        return state.withLock { state in
            for (id, tenant) in state.open {
                guard let scopes = tenant.context.openScopes, scopes.count == 0, now - scopes.idleSince >= timeout
                else { continue }
                evict(id, from: &state)
            }
            if state.open.isEmpty { state.sweeper = nil }
            return !state.open.isEmpty
        }
    }

    /// Starts the sweeper if the tenancy has an idle timeout and none runs.
    private func startSweeping(_ state: inout State) {
        guard state.sweeper == nil, let idleTimeout = tenancy.idleTimeout else { return }
        // Checked twice per timeout: a tenant goes at most half a timeout late.
        let interval = max(idleTimeout / 2, .milliseconds(1))
        state.sweeper = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard !Task.isCancelled, let self, self.sweep(idleTimeout: idleTimeout) else { return }
            }
        }
    }

    /// Takes the tenant `id` out of the table and starts closing its services.
    private func evict(_ id: TenantID, from state: inout State) {
        guard let tenant = state.open.removeValue(forKey: id) else { return }
        state.evicted += 1
        registry.tenantEvicted(open: state.open.count)
        close(tenant, in: &state)
    }

    /// Starts closing `tenant`'s services, in a task the state keeps until they have closed.
    ///
    /// Created under the lock, so that the task, which takes the lock to remove itself, finds
    /// itself there.
    private func close(_ tenant: Tenant, in state: inout State) {
        guard let id = tenant.context.tenantID else { return }
        let registry = registry
        let previous = state.closing[id]?.task
        state.closes += 1
        let number = state.closes
        let task = Task { [weak self] in
            // The instance before this one, if it is still closing, goes first.
            await previous?.value
            // A tenant is evicted with no scope open, unless one was opened from the values of
            // a scope that had closed: its services wait for that one.
            await tenant.context.openScopes?.drained()
            let failures = await tenant.context.close(.success)
            if !failures.isEmpty { registry.onCloseError(ScopeCloseError(failures: failures, outcome: .success)) }
            tenant.context.detach()
            self?.closed(id, number: number)
        }
        state.closing[id] = (number, task)
    }

    /// Forgets the close `number` of tenant `id`, which has ended, unless a later one took its place.
    private func closed(_ id: TenantID, number: Int) {
        state.withLock { state in
            if state.closing[id]?.number == number { state.closing[id] = nil }
        }
    }

    /// The open tenant with no open scope that has been idle longest, if one is.
    private static func leastRecentlyUsedIdle(in open: [TenantID: Tenant]) -> TenantID? {
        var idlest: (id: TenantID, since: Int64)?
        for (id, tenant) in open {
            guard let scopes = tenant.context.openScopes, scopes.count == 0 else { continue }
            if scopes.idleSince < idlest?.since ?? .max { idlest = (id, scopes.idleSince) }
        }
        return idlest?.id
    }
}
