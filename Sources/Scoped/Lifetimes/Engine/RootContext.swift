import Synchronization

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
    /// How much work handed off to start after its scope's commit never started, because the
    /// scope did not commit.
    private let notStartedHandOffs = Atomic<Int>(0)
    /// How much work handed off threw, timed out, or failed to close its scope.
    private let failedHandOffs = Atomic<Int>(0)
    /// Taken only inside the lock of the root's ``ServiceOwner`` (never the other way round),
    /// so that a service's build, adoption or close and the watchers and carry-over sets that
    /// concern it change together.
    let state = Mutex(State())

    init(registry: ScopeRegistry) {
        self.published = registry.services.filter { $0.lifetime == .app }.map { PublishedService(id: $0.id) }
    }

    /// Counts work handed off for after its scope's commit that did not start.
    func countNotStartedHandOff() {
        notStartedHandOffs.wrappingAdd(1, ordering: .relaxed)
    }

    /// How much work handed off for after its scope's commit did not start.
    var notStartedHandOffCount: Int { notStartedHandOffs.load(ordering: .relaxed) }

    /// Counts work handed off that failed.
    func countFailedHandOff() {
        failedHandOffs.wrappingAdd(1, ordering: .relaxed)
    }

    /// How much work handed off failed.
    var failedHandOffCount: Int { failedHandOffs.load(ordering: .relaxed) }

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
