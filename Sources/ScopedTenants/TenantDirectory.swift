import Synchronization

/// A root's open tenants, the `TenantProvider` a ``Tenancy`` gives each root.
///
/// It opens a tenant on the first scope that needs it, evicts idle ones, and closes each
/// evicted tenant once its scopes have ended.
///
/// One lock guards the table: a tenant is found, opened or evicted under it, and a scope is
/// reserved on it under it. So a tenant with an open scope is never evicted, and a scope never
/// opens on an evicted tenant. Scopes nested in a tenant's scope (a `withScope`, handed-off
/// work) count themselves without the lock: their tenant has a scope open while they open.
final class TenantDirectory: TenantProvider {
    private struct State {
        var open: [TenantID: OpenTenant] = [:]
        /// The close of each evicted tenant that is still closing: the latest, by ID.
        ///
        /// The tenant's next instance builds nothing before it ends, so that a tenant's file is
        /// never opened while its previous instance is still closing it.
        var closing: [TenantID: (number: Int, task: Task<Void, Never>)] = [:]
        /// How many closes have started: the next one's number.
        var closes = 0
        var evicted = 0
        /// Evicts idle tenants while any is open and the tenancy has an idle timeout.
        var sweeper: Task<Void, Never>?
        /// The root's observers told of changes of its tenants, found when the first tenant opens.
        var observers: [any TenantObserver]?
        var isShutDown = false
    }

    let tenancy: Tenancy
    private let state = Mutex(State())

    init(tenancy: Tenancy) {
        self.tenancy = tenancy
    }

    deinit {
        // A root released without shutting down releases its directory: the sweeper stops now
        // rather than at its next wake, and the tenants go unclosed with the directory.
        state.withLock { $0.sweeper?.cancel() }
    }

    /// Takes none of a root's events.
    var events: ScopeObserverEvents { [] }

    /// The tenant `id` of `root`, opened from `base` if it is not open, with one scope
    /// reserved on it.
    ///
    /// - Throws: ``TenantCapacityError`` when ``Tenancy/maximumOpen`` tenants are open and each
    ///   has a scope open; what ``Tenancy/configure`` throws; `ScopedError.scopeEnded(entry:)`
    ///   once the root has shut down.
    func tenant(_ id: TenantID, of root: ScopeRoot, startingFrom base: ScopedValues) throws -> OpenTenant {
        try state.withLock { state in
            guard !state.isShutDown else { throw ScopedError.scopeEnded(entry: "tenant \(id)") }
            if let tenant = state.open[id] {
                tenant.reserveScope()
                return tenant
            }
            let tenant = try root.openTenant(id, startingFrom: base, after: state.closing[id]?.task) { values in
                try tenancy.configure(id, &values)
            }
            if let limit = tenancy.maximumOpen, state.open.count >= limit {
                guard let idlest = Self.leastRecentlyUsedIdle(in: state.open) else {
                    throw TenantCapacityError(limit: limit)
                }
                evict(idlest, from: &state)
            }
            tenant.reserveScope()
            state.open[id] = tenant
            startSweeping(&state)
            if state.observers == nil { state.observers = root.observers((any TenantObserver).self) }
            tell(&state, evicted: false)
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

    /// Evicts every tenant, then waits for every tenant's services to close; later scopes of a
    /// tenant are refused.
    nonisolated(nonsending) func shutdown() async {
        let closing = state.withLock { state -> [Task<Void, Never>] in
            state.isShutDown = true
            state.sweeper?.cancel()
            state.sweeper = nil
            for id in state.open.keys { close(state.open.removeValue(forKey: id)!, in: &state) }
            tell(&state, evicted: false)
            return state.closing.values.map(\.task)
        }
        for task in closing { await task.value }
    }

    /// Evicts the tenants that have had no scope open for the tenancy's idle timeout.
    ///
    /// - Returns: whether a tenant is still open, so sweeping goes on.
    private func sweep(idleTimeout: Duration) -> Bool {
        state.withLock { state in
            for (id, tenant) in state.open {
                guard let idle = tenant.idleTime, idle >= idleTimeout else { continue }
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
        tell(&state, evicted: true)
        close(tenant, in: &state)
    }

    /// Tells the root's tenant observers how many tenants are open now.
    private func tell(_ state: inout State, evicted: Bool) {
        for observer in state.observers ?? [] { observer.tenantsChanged(open: state.open.count, evicted: evicted) }
    }

    /// Starts closing `tenant`, in a task the state keeps until its services have closed.
    ///
    /// Created under the lock, so that the task, which takes the lock to remove itself, finds
    /// itself there.
    private func close(_ tenant: OpenTenant, in state: inout State) {
        let id = tenant.id
        let previous = state.closing[id]?.task
        state.closes += 1
        let number = state.closes
        let task = Task { [weak self] in
            // The instance before this one, if it is still closing, goes first.
            await previous?.value
            // A tenant is evicted with no scope open, unless one was opened from the values of
            // a scope that had closed: its services wait for that one.
            await tenant.close()
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
    private static func leastRecentlyUsedIdle(in open: [TenantID: OpenTenant]) -> TenantID? {
        var idlest: (id: TenantID, idle: Duration)?
        for (id, tenant) in open {
            guard let idle = tenant.idleTime else { continue }
            if idle > idlest?.idle ?? .nanoseconds(-1) { idlest = (id, idle) }
        }
        return idlest?.id
    }
}
