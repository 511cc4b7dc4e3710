import Synchronization

/// A scope that owns services: an application root, a tenant of one, or a scope opened on one
/// (a request's, or one opened with `withScope`).
///
/// It builds each service once, on first use, shares one construction among concurrent first
/// readers, and closes what it built, in reverse order, when it ends. That is all a request's
/// scope has; what only a root or a tenant has is in its ``Role``: a ``RootContext`` or a
/// ``TenantContext``.
@usableFromInline
final class ScopeContext: Sendable {
    /// A reader waiting for another task's construction; its ID lets it stop waiting when it
    /// is cancelled.
    struct Waiter {
        let id: Int
        let continuation: CheckedContinuation<AnyValueBox, any Error>
    }

    enum Slot {
        case building(Construction, [Waiter])
        /// Built: the value, its key for closing it, and when its construction finished
        /// relative to the scope's others, so that they close newest first.
        case built(AnyValueBox, key: any ScopedServiceKey.Type, order: Int)
    }

    struct Entry {
        let id: ObjectIdentifier
        var slot: Slot
    }

    struct State: ~Copyable {
        /// Services built or being built; few per scope, so a list beats a dictionary, and the
        /// first one is kept without allocating.
        var entries = SmallList<Entry>()
        /// How many services this scope has built: the next one's `order`.
        var builtCount = 0
        /// The last waiter ID handed out.
        var lastWaiterID = 0
        /// The node this scope's services are built with.
        ///
        /// The node refers to this scope too; ``close(_:)`` and ``detach()`` break that cycle. (A weak reference would
        /// give the node a side table and slow down every retain of it on the read path.)
        var node: ScopeNodeBuffer?

        func index(of id: ObjectIdentifier) -> Int? {
            entries.firstIndex { $0.id == id }
        }
    }

    /// What the scope is, and what it has beside its services.
    enum Role: Sendable {
        /// An application root.
        case root(RootContext)
        /// A tenant of a root.
        case tenant(TenantContext)
        /// A scope opened on a root (a request's, or one opened with `withScope`), of a tenant
        /// when `tenant` is set.
        case scope(root: ScopeContext, tenant: ScopeContext?)
    }

    /// What the root registered: services, requirements, variants.
    let registry: ScopeRegistry
    let role: Role
    let state = Mutex(State())
    /// The scope's one closed state: set once, under the state's lock, when the scope closes.
    ///
    /// From then on it builds nothing and a root hands out no published service. An atomic, so
    /// that a root's published services are read without the lock.
    let isClosed = Atomic<Bool>(false)

    /// An application root's context.
    init(root: RootContext, registry: ScopeRegistry) {
        self.registry = registry
        self.role = .root(root)
    }

    /// A scope opened in `parent`'s scope: of its root, and of its tenant if it has one. (Matched
    /// here, not read through ``tenant``: a root parent's case binds nothing, so no retain.)
    init(childOf parent: ScopeContext) {
        self.registry = parent.registry
        self.role =
            switch parent.role {
            case .root: .scope(root: parent, tenant: nil)
            case .tenant(let tenant): .scope(root: tenant.root, tenant: parent)
            case .scope(let root, let tenant): .scope(root: root, tenant: tenant)
            }
    }

    /// The tenant `id` of `root`: it owns the tenant's services and counts its open scopes.
    ///
    /// `predecessorClose`: the close of the tenant's previous instance, if it is still running;
    /// this one builds nothing before it ends.
    init(tenant id: TenantID, of root: ScopeContext, after predecessorClose: Task<Void, Never>? = nil) {
        self.registry = root.registry
        self.role = .tenant(TenantContext(id: id, root: root, predecessorClose: predecessorClose))
    }

    /// ``ScopedLifetime/app`` for a root, ``ScopedLifetime/tenant`` for a tenant of one,
    /// ``ScopedLifetime/scope`` for a scope opened on one.
    var lifetime: ScopedLifetime {
        switch role {
        case .root: .app
        case .tenant: .tenant
        case .scope: .scope
        }
    }

    /// The application root this scope belongs to.
    var root: ScopeContext {
        switch role {
        case .root: self
        case .tenant(let tenant): tenant.root
        case .scope(let root, _): root
        }
    }

    /// The tenant this scope belongs to (itself, for a tenant); `nil` for a root and its
    /// scopes of no tenant.
    var tenant: ScopeContext? {
        switch role {
        case .root: nil
        case .tenant: self
        case .scope(_, let tenant): tenant
        }
    }

    /// The tenant this scope belongs to, or is; `nil` for a root and its scopes of no tenant.
    var tenantID: TenantID? {
        switch role {
        case .root: nil
        case .tenant(let tenant): tenant.id
        case .scope(_, let tenant): tenant?.tenantID
        }
    }

    /// For a root or a tenant: the scopes opened on it and not yet closed; `nil` for a scope.
    var openScopes: OpenScopes? {
        switch role {
        case .root(let root): root.openScopes
        case .tenant(let tenant): tenant.openScopes
        case .scope: nil
        }
    }

    /// What only a root has; `nil` for a tenant and a scope.
    var rootContext: RootContext? {
        if case .root(let root) = role { root } else { nil }
    }

    /// Records the node whose values this scope builds and closes its services with.
    func attach(_ node: ScopeNode) {
        state.withLock { $0.node = node.buffer }
    }

    /// Forgets the node, breaking the cycle between them, for a root that is discarded
    /// without being shut down.
    func detach() {
        state.withLock { $0.node = nil }
    }

    /// Whether the service for `key` has been built in this scope.
    func isBuilt(_ key: ObjectIdentifier) -> Bool {
        state.withLock { state in
            guard let index = state.index(of: key), case .built = state.entries[index].slot else { return false }
            return true
        }
    }

    /// How many readers wait for the construction of the service `key` in progress; 0 when
    /// none is in progress.
    func waiterCount(for key: ObjectIdentifier) -> Int {
        state.withLock { state in
            guard let index = state.index(of: key), case .building(_, let waiters) = state.entries[index].slot else {
                return 0
            }
            return waiters.count
        }
    }

    /// The service `link` names, in its box, built with `make` now if this scope has not
    /// built it yet.
    ///
    /// On boxes, not `Value`s (a generic local of an async function is a task allocation of
    /// its own; only `make` and the reader's downcast meet the value's type), with the locked
    /// steps synchronous (an async function's locals live in the task's allocator), and inlined
    /// into the reader (each async call is a frame, and often an executor check).
    @inline(__always)
    nonisolated(nonsending) func service(
        _ link: ConstructionChain.Link,
        make: () async throws -> AnyValueBox
    ) async throws -> AnyValueBox {
        // Read inside a construction (a task-local read): checked for a cycle or a captive
        // read, and told.
        let chain = ConstructionChain.ofCurrentTask
        if let reader = chain.innermost?.link { try checkRead(of: link, by: reader, in: chain) }
        // A built app service of the root: its slot's lock only.
        let published = if case .root(let root) = role { root.published(link) } else { AnyValueBox?.none }
        if let published, !isClosed.load(ordering: .acquiring) { return published }
        while true {
            switch try claim(link, in: chain) {
            case .built(let box):
                return box
            case .build(let node, let construction):
                return try await build(link, with: node, chain: chain.appending(construction), make: make)
            case .wait(let builder):
                if let box = try await wait(for: link, builtBy: builder, in: chain) { return box }
            }
        }
    }

    /// What a reader of a service does next.
    private enum Claim {
        /// Returns the service, built already.
        case built(AnyValueBox)
        /// Builds the service itself, as the construction given, with the node given current
        /// (`nil` when it is the calling task's current node already).
        case build(ScopeNode?, Construction)
        /// Waits for another task's construction.
        case wait(Construction)
    }

    /// Finds the service `link` names, or claims its construction for the calling task, or
    /// names the construction to wait for.
    private func claim(_ link: ConstructionChain.Link, in chain: ConstructionChain) throws -> Claim {
        let id = ObjectIdentifier(link.key)
        return try state.withLock { state in
            if let index = state.index(of: id) {
                switch state.entries[index].slot {
                case .built(let box, _, _): return .built(box)
                case .building(let builder, _): return .wait(builder)
                }
            }
            // Compared in place, so that the common case, a read inside the scope's own
            // binding, takes no reference to the node.
            guard !isClosed.load(ordering: .relaxed), let isCurrent = Self.isCurrent(state.node) else {
                throw ScopedError.scopeEnded(entry: link.key.name)
            }
            let construction = Construction(link: link, scope: self)
            state.entries.append(Entry(id: id, slot: .building(construction, [])))
            return .build(isCurrent ? nil : state.node.map(ScopeNode.init), construction)
        }
    }
}
