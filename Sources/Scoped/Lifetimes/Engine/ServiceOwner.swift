import Synchronization

/// The owner of the services of one lifetime: an application root (``ScopedLifetime/app``), a
/// tenant of one (``ScopedLifetime/tenant``), or a scope opened on one (``ScopedLifetime/scope``:
/// a request's, or one opened with `withScope`).
///
/// It builds each service of its level once, on first use, shares one construction among
/// concurrent first readers, and closes what it built, in reverse order, when it ends. A
/// service's owner is the nearest one at the service's lifetime, found through ``parent``: a
/// scope's parent is its tenant (or its root when it has none), a tenant's is its root. One type
/// for every level: what only a root or a tenant has is in a stored property that is `nil`
/// elsewhere, never in a case matched across files.
///
/// It holds no values: a reader's node leads to the owner's own node
/// (``ScopeNodeBuffer/ownNode(of:)``), which its services are built with, and whoever ends the
/// owner (a `Scope`, `withScope`, a root, an `OpenTenant`) holds that node and closes with it.
/// Nodes refer to owners, never the other way, so an owner no one refers to is released
/// whether or not it was closed.
@usableFromInline
final class ServiceOwner: Sendable {
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
        /// Work handed off to start once this scope has ended, told how it ended; empty (no
        /// allocation) unless `handOff(_:timeout:operation:)` was called in the scope.
        var workAtEnd: [HandedOffWork.Run] = []
        func index(of id: ObjectIdentifier) -> Int? {
            entries.firstIndex { $0.id == id }
        }
    }

    /// What the root registered: services, requirements, observers.
    let registry: ScopeRegistry
    /// The lifetime of the services this owner builds.
    let level: ScopedLifetime
    /// The owner of the next longer lifetime; `nil` for a root.
    ///
    /// A scope's tenant, or its root when it has none; a tenant's root. A scope opened inside
    /// another scope has the same parent.
    let parent: ServiceOwner?
    /// For a root and a tenant: the scopes opened under it and not yet closed; `nil` for a scope.
    let openScopes: OpenScopes?
    /// What only a root has: its published services, watchers and carry-over.
    let rootContext: RootContext?
    /// What only a tenant has: its ID, and the close of its previous instance.
    let tenantContext: TenantContext?
    let state = Mutex(State())
    /// The scope's one closed state: set once, under the state's lock, when the scope closes.
    ///
    /// From then on it builds nothing and a root hands out no published service. An atomic, so
    /// that a root's published services are read without the lock.
    let isClosed = Atomic<Bool>(false)

    private init(
        registry: ScopeRegistry,
        level: ScopedLifetime,
        parent: ServiceOwner?,
        openScopes: OpenScopes? = nil,
        rootContext: RootContext? = nil,
        tenantContext: TenantContext? = nil
    ) {
        self.registry = registry
        self.level = level
        self.parent = parent
        self.openScopes = openScopes
        self.rootContext = rootContext
        self.tenantContext = tenantContext
    }

    /// An application root's owner.
    convenience init(root: RootContext, registry: ScopeRegistry) {
        self.init(registry: registry, level: .app, parent: nil, openScopes: root.openScopes, rootContext: root)
    }

    /// A scope opened in `parent`'s scope: its services' owner, under its tenant or root.
    convenience init(childOf parent: ServiceOwner) {
        self.init(registry: parent.registry, level: .scope, parent: parent.level == .scope ? parent.parent : parent)
    }

    /// The tenant `id` of `root`: it owns the tenant's services and counts its open scopes, and
    /// how long it has had none.
    ///
    /// `predecessorClose`: the close of the tenant's previous instance, if it is still running;
    /// this one builds nothing before it ends.
    convenience init(tenant id: TenantID, of root: ServiceOwner, after predecessorClose: Task<Void, Never>? = nil) {
        self.init(
            registry: root.registry,
            level: .tenant,
            parent: root,
            openScopes: OpenScopes(tracksIdleTime: true),
            tenantContext: TenantContext(id: id, predecessorClose: predecessorClose)
        )
    }

    /// The owner of the services of `level` for this scope: itself or its nearest ancestor at
    /// that level; `nil` when it has none (a tenant service read in a scope of no tenant, a
    /// scope service read in a root's values).
    @inline(__always)
    func owner(at level: ScopedLifetime) -> ServiceOwner? {
        var owner = self
        while owner.level != level {
            guard let parent = owner.parent else { return nil }
            owner = parent
        }
        return owner
    }

    /// The application root this scope belongs to.
    var root: ServiceOwner { owner(at: .app) ?? self }

    /// The tenant this scope belongs to, or is; `nil` for a root and its scopes of no tenant.
    var tenantID: TenantID? { owner(at: .tenant)?.tenantContext?.id }

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

    /// The service `link` names, in its box, built with `make` now, with `node` (this owner's
    /// own node) current, if this scope has not built it yet.
    ///
    /// On boxes, not `Value`s (a generic local of an async function is a task allocation of
    /// its own; only `make` and the reader's downcast meet the value's type), with the locked
    /// steps synchronous (an async function's locals live in the task's allocator), and inlined
    /// into the reader (each async call is a frame, and often an executor check).
    @inline(__always)
    nonisolated(nonsending) func service(
        _ link: ConstructionChain.Link,
        node: ScopeNodeBuffer,
        make: () async throws -> AnyValueBox
    ) async throws -> AnyValueBox {
        // Read inside a construction (a task-local read): checked for a cycle or a captive
        // read, and told.
        let chain = ConstructionChain.ofCurrentTask
        if let reader = chain.innermost?.link { try checkRead(of: link, by: reader, in: chain) }
        // A built app service of the root: its slot's lock only.
        let published = rootContext?.published(link)
        if let published, !isClosed.load(ordering: .acquiring) { return published }
        while true {
            switch try claim(link, node: node, in: chain) {
            case .built(let box):
                return box
            case .build(let construction):
                // Compared in place, so that the common case, a read inside the scope's own
                // binding, takes no reference to the node.
                let current = Self.isCurrent(node) ? nil : ScopeNode(node)
                return try await build(link, with: current, own: node, chain: chain.appending(construction), make: make)
            case .wait(let builder):
                if let box = try await wait(for: link, builtBy: builder, in: chain) { return box }
            }
        }
    }

    /// What a reader of a service does next.
    private enum Claim {
        /// Returns the service, built already.
        case built(AnyValueBox)
        /// Builds the service itself, as the construction given.
        case build(Construction)
        /// Waits for another task's construction.
        case wait(Construction)
    }

    /// Finds the service `link` names, or claims its construction for the calling task, or
    /// names the construction to wait for.
    private func claim(_ link: ConstructionChain.Link, node: ScopeNodeBuffer, in chain: ConstructionChain) throws
        -> Claim
    {
        let id = ObjectIdentifier(link.key)
        return try state.withLock { state in
            if let index = state.index(of: id) {
                switch state.entries[index].slot {
                case .built(let box, _, _): return .built(box)
                case .building(let builder, _): return .wait(builder)
                }
            }
            guard !isClosed.load(ordering: .relaxed) else { throw ScopedError.scopeEnded(entry: link.key.name) }
            let construction = Construction(link: link, scope: self)
            state.entries.append(Entry(id: id, slot: .building(construction, [])))
            return .build(construction)
        }
    }
}

/// Finding a scope's node among the calling task's, binding it where it is not.
extension ServiceOwner {
    /// Whether `node` is the calling task's current node, read in place.
    static func isCurrent(_ node: ScopeNodeBuffer) -> Bool {
        ScopedValues.withCurrent { $0.node.buffer === node }
    }

    /// Runs `body` with `node` as the current scope's values; `nil` means it is already.
    ///
    /// Constructions and closes see the scope they belong to. Where `node` is already current
    /// (a service read, or closed by `withScope`, inside its own scope: the common case) no
    /// task-local is pushed.
    nonisolated(nonsending) static func withCurrent<R>(
        _ node: ScopeNode?,
        _ body: () async throws -> R
    ) async throws -> R {
        guard let node, !isCurrent(node.buffer) else { return try await body() }
        return try await ScopedValues.taskLocalNode.withValue(node, operation: body)
    }
}
