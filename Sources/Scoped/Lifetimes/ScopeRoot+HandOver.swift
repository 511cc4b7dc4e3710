import Synchronization

/// How a root hands the app services it built to a root that replaces it (ScopedReload's
/// reloads), so that an unchanged service is not built twice nor closed while in use.
///
/// 1. The new root ``adopt(_:reading:services:)``s each service it would build the same, while
///    the old root stays current and keeps closing it.
/// 2. Once the new root is current, it ``takeOverClosing(of:from:)`` them: from then on the old
///    root no longer closes them, and the new root closes them after the old root's scopes,
///    which may still use them, have closed too.
///
/// A new root that is dropped before step 2 leaves every adopted service to the old root.
extension ScopeRoot {
    /// An app service a root built or adopted and still holds, as another root can adopt it.
    public struct BuiltService: Sendable {
        /// The service's key.
        public let key: any ScopedServiceKey.Type
        let id: ObjectIdentifier
        let box: AnyValueBox
    }

    /// The app services this root built or adopted and still holds, oldest first.
    public var builtServices: [BuiltService] { context.builtServices() }

    /// Holds `service`, built by another root, as built here, without closing it until
    /// ``takeOverClosing(of:from:)``.
    ///
    /// The root's observers that take ``ScopeObserverEvents/appReads`` are told of it as of a
    /// service built here: ``ScopeObserver/appServiceBuilt(_:in:reading:)`` with no duration and
    /// `inputs`, then ``ScopeObserver/serviceRead(_:by:refusal:)`` for each of `services`.
    ///
    /// - Parameters:
    ///   - service: a service of the root this one replaces, from its ``builtServices``.
    ///   - inputs: what its construction read there.
    ///   - services: the services its construction read there.
    /// - Returns: `false` when this root already built or is building the service, or has shut
    ///   down: then it is not adopted.
    public func adopt(
        _ service: BuiltService,
        reading inputs: [ScopeInput],
        services: [any ScopedServiceKey.Type]
    ) -> Bool {
        guard context.adopt(service) else { return false }
        let observers = context.registry.observers
        if observers.observeAppReads {
            observers.appServiceBuilt(service.key, in: nil, reading: inputs)
            for read in services { observers.serviceRead(read, by: service.key, byAppService: true, refusal: nil) }
        }
        return true
    }

    /// Closes from now on `services`, which this root adopted from `previous`, and stops
    /// `previous` from closing them.
    ///
    /// This root closes them when it shuts down, once `previous`'s scopes, which may still use
    /// them, have closed too.
    public func takeOverClosing(of services: [BuiltService], from previous: ScopeRoot) {
        previous.rootContext.handOver(Set(services.map(\.id)))
        rootContext.closeCarriedOver(from: previous.rootContext)
    }
}

extension ScopeRoot {
    /// Watches this root's app services: returns those built so far, oldest first, then calls
    /// `built` with each built from now on.
    ///
    /// Together: every app service the root builds, once. `closed` is told each one the root
    /// closes, once it has.
    ///
    /// How an application runs the app services that must run beside it (a database client's
    /// connection pool) from their build to their close: ScopedServiceLifecycle's
    /// `withRunningServices` and `ScopeRootService` are written on it. Services adopted from a
    /// root this one replaced are not among them: they were built, and are watched, there.
    ///
    /// The calls are made on the task that builds or closes the service: `built` and `closed`
    /// must be quick and must not block.
    public func watchAppServices(
        built: @escaping @Sendable (any Sendable) -> Void,
        closed: (@Sendable (any Sendable) -> Void)? = nil
    ) -> [any Sendable] {
        context.watchBuiltServices(built, closed: closed)
    }
}

/// What an application root has beside the app services it builds: the slots it publishes
/// them in, its open scopes, who watches its services, and what a reload carried
/// over to or from it.
///
/// A root's ``ServiceOwner`` builds and closes its services as any scope's does; this holds
/// the rest, so that a request scope carries none of it.
final class RootContext: Sendable {
    struct State {
        /// Told each service the root builds, as it is built (``ServiceOwner/watchBuiltServices(_:closed:)``).
        var watchers: [@Sendable (any Sendable) -> Void] = []
        /// Told each service the root closes, once it has closed.
        var closeWatchers: [@Sendable (any Sendable) -> Void] = []
        /// Built services the root holds but does not close: carried over from the root it
        /// replaces until the reload commits, or carried over to the root that replaced it.
        var notClosed: Set<ObjectIdentifier> = []
        /// Services carried over from another root: already running, so never handed to
        /// watchers as built here.
        var carriedOver: Set<ObjectIdentifier> = []
        /// The open scopes of the roots this one carried services over from, while any is
        /// open: they use those services too, so this root closes them only once they drained.
        var predecessors: [OpenScopes] = []
    }

    /// A slot per registered app service, set once it is built: reading a built app service
    /// takes only its slot's lock, not the root's.
    ///
    /// A list, not a dictionary: a root has few app services, and comparing their identities
    /// costs less than hashing one.
    let published: [PublishedService]
    /// The scopes opened on the root and not yet closed.
    let openScopes = OpenScopes()
    /// Taken only inside the lock of the root's ``ServiceOwner`` (never the other way round),
    /// so that a service's build, adoption or close and the watchers and carry-over sets that
    /// concern it change together.
    let state = Mutex(State())

    init(registry: ScopeRegistry) {
        self.published = registry.services.filter { $0.lifetime == .app }.map { PublishedService(id: $0.id) }
    }

    /// The built app service `link` names, once published.
    func published(_ link: ConstructionChain.Link) -> AnyValueBox? {
        publishedSlot(for: ObjectIdentifier(link.key))?.published
    }

    /// The slot the app service `id` is published in, when it is registered.
    func publishedSlot(for id: ObjectIdentifier) -> PublishedService? {
        for slot in published where slot.id == id { return slot }
        return nil
    }

    /// Publishes `box`, the built app service `id`, for reads that skip the construction's
    /// bookkeeping.
    func publish(_ box: AnyValueBox, for id: ObjectIdentifier) {
        publishedSlot(for: id)?.publish(box)
    }

    /// The open scopes of this root and of its predecessors, those not drained yet.
    var undrainedScopes: [OpenScopes] {
        ([openScopes] + state.withLock { $0.predecessors }).filter { $0.count > 0 }
    }

    /// Returns once every scope opened on this root has closed, and every scope of the roots
    /// it carried services over from.
    func drain() async {
        await openScopes.drained()
        for predecessor in state.withLock({ $0.predecessors }) { await predecessor.drained() }
    }

    /// From now on, closes the services it adopted from `previous`.
    ///
    /// The reload that adopted them committed. Its shutdown closes them only once `previous`'s scopes, which may still
    /// use them, have closed too.
    func closeCarriedOver(from previous: RootContext) {
        let predecessors = previous.undrainedScopes
        state.withLock { state in
            guard !state.carriedOver.isEmpty else { return }
            state.notClosed.subtract(state.carriedOver)
            state.predecessors = predecessors
        }
    }

    /// Stops closing `ids`: they were carried over to the root that replaced this one.
    func handOver(_ ids: Set<ObjectIdentifier>) {
        state.withLock { $0.notClosed.formUnion(ids) }
    }
}

/// The slot a root publishes a built app service in: set once, then read by every request,
/// under a lock of its own that no other service's read takes.
///
/// Under a lock, not in an `AtomicLazyReference`: the standard library does not inline
/// `AtomicLazyReference.load()`, which then looks up its generic metadata on every read,
/// 130 ns on this project's machine where a lock taken and released costs 15 ns.
final class PublishedService: Sendable {
    /// The service's key, by identity.
    let id: ObjectIdentifier
    private let box = Mutex<AnyValueBox?>(nil)

    init(id: ObjectIdentifier) { self.id = id }

    /// The published service, once there is one.
    var published: AnyValueBox? { box.withLock { $0 } }

    /// Publishes `box` unless a service is published already.
    func publish(_ box: AnyValueBox) {
        self.box.withLock { published in
            if published == nil { published = box }
        }
    }
}
