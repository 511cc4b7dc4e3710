import Synchronization

/// A scope that owns services: an application root, or a scope opened with `withScope`.
///
/// It builds each service once, on first use, shares one construction among concurrent first
/// readers, and closes what it built, in reverse order, when it ends.
@usableFromInline
package final class ScopeContext: Sendable {
    /// A reader waiting for another task's construction; its ID lets it stop waiting when it
    /// is cancelled.
    private struct Waiter {
        let id: Int
        let continuation: CheckedContinuation<AnyValueBox, any Error>
    }

    private enum Slot {
        case building(Construction, [Waiter])
        /// Built: the value, its key for closing it, and when its construction finished
        /// relative to the scope's others, so that they close newest first.
        case built(AnyValueBox, key: any ScopedServiceKey.Type, order: Int)
    }

    private struct Entry {
        let id: ObjectIdentifier
        var slot: Slot
    }

    private struct State: ~Copyable {
        /// Services built or being built; few per scope, so a list beats a dictionary, and the
        /// first one is kept without allocating.
        var entries = SmallList<Entry>()
        /// How many services this scope has built: the next one's `order`.
        var builtCount = 0
        /// The last waiter ID handed out.
        var lastWaiterID = 0
        var isClosed = false
        /// The node this scope's services are built with.
        ///
        /// The node refers to this scope too; ``close(_:)`` and ``detach()`` break that cycle. (A weak reference would
        /// give the node a side table and slow down every retain of it on the read path.)
        var node: ScopeNodeBuffer?
        /// For a root: who waits for the scopes opened on it to drain.
        ///
        /// This and ``watchers`` are optionals so that a request's scope, which never has
        /// either, starts without a reference to an empty array.
        var drainWaiters: [CheckedContinuation<Void, Never>]?
        /// Told each service this scope builds, as it is built (``watchBuiltServices(_:)``).
        var watchers: [@Sendable (any Sendable) -> Void]?

        func index(of id: ObjectIdentifier) -> Int? {
            entries.firstIndex { $0.id == id }
        }
    }

    /// Thrown inside the cache when a construction this reader waited for failed before it
    /// could register; the reader starts over.
    private struct Retry: Error {}

    /// ``ScopedLifetime/app`` for a root, ``ScopedLifetime/scope`` for a scope opened on one.
    package let lifetime: ScopedLifetime
    /// What the root registered: services, requirements, variants.
    package let registry: ScopeRegistry
    /// The root this scope belongs to, or `nil` when this is the root.
    private let parentRoot: ScopeContext?
    private let state = Mutex(State())
    /// For a root: scopes opened on it and not yet closed.
    ///
    /// An atomic, so that the requests of every core do not queue on the root's lock to count
    /// themselves.
    private let openScopes = Atomic<Int>(0)
    /// For a root: a slot per registered app service, set once it is built.
    ///
    /// Reading a built app service then takes no lock. Empty for a scope opened on a root.
    private let published: [ObjectIdentifier: PublishedService]
    /// Set when the scope closes: published services are then no longer handed out.
    private let isClosed = Atomic<Bool>(false)

    package init(root registry: ScopeRegistry) {
        self.lifetime = .app
        self.registry = registry
        self.parentRoot = nil
        var published: [ObjectIdentifier: PublishedService] = [:]
        for service in registry.services where service.lifetime == .app { published[service.id] = PublishedService() }
        self.published = published
    }

    package init(childOf parent: ScopeContext) {
        self.lifetime = .scope
        self.registry = parent.registry
        self.parentRoot = parent.root
        self.published = [:]
    }

    /// The application root this scope belongs to.
    package var root: ScopeContext { parentRoot ?? self }

    /// Records the node whose values this scope builds and closes its services with.
    package func attach(_ node: ScopeNode) {
        state.withLock { $0.node = node.buffer }
    }

    /// Forgets the node, breaking the cycle between them, for a root that is discarded
    /// without being shut down.
    package func detach() {
        state.withLock { $0.node = nil }
    }

    /// Whether the service for `key` has been built in this scope.
    package func isBuilt(_ key: ObjectIdentifier) -> Bool {
        state.withLock { state in
            guard let index = state.index(of: key), case .built = state.entries[index].slot else { return false }
            return true
        }
    }

    /// How many readers wait for the construction of the service `key` in progress; 0 when
    /// none is in progress.
    package func waiterCount(for key: ObjectIdentifier) -> Int {
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
    /// The engine works on boxes, not on `Value`s: it is not specialized for a key, and a
    /// local of a generic type in an async function is a task allocation of its own. Only
    /// `make`, which the reader passes, and the reader's downcast meet the value's type. For
    /// the same reason the locked steps are synchronous functions of their own: what an async
    /// function keeps in a local, even between two `await`s, lives in the task's allocator.
    /// And it is inlined into the reader, as are `build` and the closing loop into theirs:
    /// each async call is a frame from the task's allocator, and often an executor check.
    @inline(__always)
    nonisolated(nonsending) func service(
        _ link: ConstructionChain.Link,
        make: () async throws -> AnyValueBox
    ) async throws -> AnyValueBox {
        // Read inside a construction: checked for a cycle or a captive read, and recorded.
        // (A task-local read, not a root-wide counter: under load some construction is
        // always in flight, and a counter every build writes is shared by every core.)
        let chain = ConstructionChain.ofCurrentTask
        if chain.innermost != nil { try registry.dependencies.check(link, in: chain) }
        // A built app service of the root: no lock.
        if !published.isEmpty, let box = published[ObjectIdentifier(link.key)]?.box.load(),
            !isClosed.load(ordering: .acquiring)
        {
            return box
        }
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
            guard !state.isClosed, let isCurrent = Self.isCurrent(state.node) else {
                throw ScopedError.scopeEnded(entry: link.key.name)
            }
            let construction = Construction(link: link, scope: self)
            state.entries.append(Entry(id: id, slot: .building(construction, [])))
            return .build(isCurrent ? nil : state.node.map(ScopeNode.init), construction)
        }
    }

    /// Waits for `builder` to finish building the service `link` names.
    ///
    /// - Returns: the service, or `nil` when its construction failed before this task
    ///   waited: then the reader claims it again.
    nonisolated(nonsending) private func wait(
        for link: ConstructionChain.Link,
        builtBy builder: Construction,
        in chain: ConstructionChain
    ) async throws -> AnyValueBox? {
        let id = ObjectIdentifier(link.key)
        // A task that is itself building waits only where that cannot close a cycle.
        let waiting = chain.constructions
        try ConstructionGraph.beginWait(waiting, for: builder)
        defer { ConstructionGraph.endWait(waiting, for: builder) }
        let waiterID = state.withLock { state in
            state.lastWaiterID += 1
            return state.lastWaiterID
        }
        do {
            // A cancelled reader stops waiting; the construction goes on for the others.
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    let ready: Result<AnyValueBox, any Error>? = state.withLock { state in
                        guard let index = state.index(of: id) else { return .failure(Retry()) }
                        switch state.entries[index].slot {
                        case .built(let box, _, _):
                            return .success(box)
                        case .building(let builder, var waiters):
                            // Checked under the lock the cancellation handler takes.
                            if Task.isCancelled { return .failure(CancellationError()) }
                            waiters.append(Waiter(id: waiterID, continuation: continuation))
                            state.entries[index].slot = .building(builder, waiters)
                            return nil
                        }
                    }
                    if let ready { continuation.resume(with: ready) }
                }
            } onCancel: {
                stopWaiting(waiterID, for: id)
            }
        } catch is Retry {
            return nil
        }
    }

    /// Takes the waiter `waiterID` off the construction of service `id` and fails it with
    /// `CancellationError`, unless the construction already handed it its result.
    private func stopWaiting(_ waiterID: Int, for id: ObjectIdentifier) {
        let waiter = state.withLock { state -> Waiter? in
            guard let index = state.index(of: id), case .building(let builder, var waiters) = state.entries[index].slot,
                let position = waiters.firstIndex(where: { $0.id == waiterID })
            else { return nil }
            let waiter = waiters.remove(at: position)
            state.entries[index].slot = .building(builder, waiters)
            return waiter
        }
        waiter?.continuation.resume(throwing: CancellationError())
    }

    /// Builds the service `link` names with `make`, `node` current (`nil`: it is already) and
    /// `chain` as the construction chain, stores it, and hands it to the tasks that waited for it.
    @inline(__always)
    nonisolated(nonsending) private func build(
        _ link: ConstructionChain.Link,
        with node: ScopeNode?,
        chain: ConstructionChain,
        make: () async throws -> AnyValueBox
    ) async throws -> AnyValueBox {
        let box: AnyValueBox
        // App services are built once per root: their build time is worth two clock reads.
        let start = link.lifetime == .app ? ContinuousClock.now : nil
        do {
            #if Instrumentation
            let instrumented = registry.instruments != nil
            #else
            let instrumented = false
            #endif
            if !instrumented, node == nil {
                // A request scope's services are built inside its binding: no binding of their
                // own, and `make` is the operation itself, without a closure around it.
                box = try await ConstructionChain.$current.withValue(chain, operation: make)
            } else {
                box = try await ConstructionChain.$current.withValue(chain) {
                    #if Instrumentation
                    if let instruments = registry.instruments {
                        return try await Self.withCurrent(node) { try await instruments.build(link.key, make) }
                    }
                    #endif
                    return try await Self.withCurrent(node, make)
                }
            }
        } catch {
            abandonBuild(of: link, failingWith: error)
            throw error
        }
        if let start { registry.dependencies.appServiceBuilt(link, in: ContinuousClock.now - start) }
        guard store(box, builtFor: link) else {
            try await closeBuiltAfterEnd(box, of: link, with: node)
        }
        return box
    }

    /// Forgets the failed construction of the service `link` names and fails its waiters.
    private func abandonBuild(of link: ConstructionChain.Link, failingWith error: any Error) {
        let id = ObjectIdentifier(link.key)
        let waiters = state.withLock { state -> [Waiter] in
            guard let index = state.index(of: id) else { return [] }
            defer { state.entries.remove(at: index) }
            if case .building(_, let waiters) = state.entries[index].slot { return waiters }
            return []
        }
        for waiter in waiters { waiter.continuation.resume(throwing: error) }
    }

    /// Stores the service built for `link` and hands it to its waiters and watchers.
    ///
    /// - Returns: `false` when the scope ended during the construction: then nothing is
    ///   stored, the waiters fail with `scopeEnded`, and the builder closes the service.
    private func store(_ box: AnyValueBox, builtFor link: ConstructionChain.Link) -> Bool {
        let id = ObjectIdentifier(link.key)
        typealias Handed = (
            waiters: [Waiter]?, watchers: [@Sendable (any Sendable) -> Void]?,
            stored: Bool
        )
        // Only what there is to hand over leaves the lock: most services have no waiter and
        // no watcher, and an empty array is still a reference to copy.
        let (waiters, watchers, stored) = state.withLock { state -> Handed in
            guard let index = state.index(of: id) else { return (nil, nil, false) }
            var waiters: [Waiter]?
            if case .building(_, let building) = state.entries[index].slot, !building.isEmpty { waiters = building }
            if state.isClosed {
                state.entries.remove(at: index)
                return (waiters, nil, false)
            }
            state.entries[index].slot = .built(box, key: link.key, order: state.builtCount)
            state.builtCount += 1
            return (waiters, state.watchers, true)
        }
        guard stored else {
            let error = ScopedError.scopeEnded(entry: link.key.name)
            for waiter in waiters ?? [] { waiter.continuation.resume(throwing: error) }
            return false
        }
        if let slot = published[id] { _ = slot.box.storeIfNil(box) }
        if let watchers {
            let value = link.key.value(erased: box)
            for watcher in watchers { watcher(value) }
        }
        for waiter in waiters ?? [] { waiter.continuation.resume(returning: box) }
        return true
    }

    /// Closes a service whose scope ended while it was being built, so nothing leaks, reports
    /// a close that throws like every other close failure, and throws `scopeEnded`.
    nonisolated(nonsending) private func closeBuiltAfterEnd(
        _ box: AnyValueBox,
        of link: ConstructionChain.Link,
        with node: ScopeNode?
    ) async throws -> Never {
        do {
            try await Self.withCurrent(node) { try await link.key.close(erased: box, outcome: .cancelled) }
        } catch let closeError {
            let failure = ScopeCloseError.Failure(entry: link.key.name, error: closeError)
            registry.onCloseError(ScopeCloseError(failures: [failure], outcome: .cancelled))
        }
        throw ScopedError.scopeEnded(entry: link.key.name)
    }

    /// Calls `watcher` with each service this scope builds from now on, as it is built, and
    /// returns the services it has built so far, oldest first: together, every service, once.
    ///
    /// How an application runs the app services that must run beside it (a database client's
    /// connection pool): `ScopeRoot.withRunningServices` in ScopedServiceLifecycle.
    package func watchBuiltServices(_ watcher: @escaping @Sendable (any Sendable) -> Void) -> [any Sendable] {
        state.withLock { state in
            state.watchers = (state.watchers ?? []) + [watcher]
            var built: [(order: Int, value: any Sendable)] = []
            for entry in state.entries {
                guard case .built(let box, let key, let order) = entry.slot else { continue }
                built.append((order, key.value(erased: box)))
            }
            return built.sorted { $0.order < $1.order }.map(\.value)
        }
    }

    /// Ends the scope: closes every service it built, newest first, each told `outcome`.
    ///
    /// A scope that built nothing returns without suspending, and, inlined into ``end(_:)``,
    /// without an async call.
    ///
    /// - Returns: the closes that threw; every close is attempted.
    @inline(__always)
    nonisolated(nonsending) package func close(_ outcome: ScopeOutcome) async -> [ScopeCloseError.Failure] {
        let (built, node) = takeBuiltServices()
        return built.isEmpty ? [] : await close(built, in: node, outcome: outcome)
    }

    /// Marks the scope closed and takes the services it built out of its state.
    ///
    /// The entries move out (no copy): a closed scope keeps nothing, and a later read of its
    /// services is refused with `scopeEnded`. Empty when the scope built nothing, or was closed.
    private func takeBuiltServices() -> (built: SmallList<Entry>, node: ScopeNode) {
        state.withLock { state -> (SmallList<Entry>, ScopeNode) in
            guard !state.isClosed else { return (SmallList(), .empty) }
            state.isClosed = true
            isClosed.store(true, ordering: .releasing)
            let node = state.node.take()
            guard state.builtCount > 0 else { return (SmallList(), .empty) }
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
            return (entries, node.map(ScopeNode.init) ?? .empty)
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
        if Self.isCurrent(node.buffer) { return await closeEach(of: entries, outcome: outcome) }
        return await ScopedValues.taskLocalNode.withValue(node) { await closeEach(of: entries, outcome: outcome) }
    }

    /// Closes the built services among `entries`, newest first, with their scope current.
    @inline(__always)
    nonisolated(nonsending) private func closeEach(
        of entries: SmallList<Entry>,
        outcome: ScopeOutcome
    ) async -> [ScopeCloseError.Failure] {
        var failures: [ScopeCloseError.Failure] = []
        // Newest first: by descending `order`, found by scanning the few entries, so closing
        // allocates nothing.
        var previous = Int.max
        while let (key, box, order) = Self.newest(in: entries, before: previous) {
            previous = order
            do {
                if let timeout = key.closeTimeout ?? registry.closeTimeout {
                    let registry = registry
                    let entry = key.name
                    // Bounded: a close that does not return is abandoned, and the scope ends.
                    try await AbandonableWork.run(
                        { try await Self.close(key, box, outcome: outcome, registry: registry) },
                        abandoningAfter: timeout
                    ) { ScopeCloseTimeoutError(entry: entry, timeout: timeout) }
                } else {
                    try await Self.close(key, box, outcome: outcome, registry: registry)
                }
            } catch {
                failures.append(ScopeCloseError.Failure(entry: key.name, error: error))
            }
        }
        return failures
    }

    /// Closes one service, with its span and metrics when instruments are installed.
    @inline(__always)
    nonisolated(nonsending) private static func close(
        _ key: any ScopedServiceKey.Type,
        _ box: AnyValueBox,
        outcome: ScopeOutcome,
        registry: ScopeRegistry
    ) async throws {
        #if Instrumentation
        if let instruments = registry.instruments {
            try await instruments.close(key, outcome: outcome) {
                try await key.close(erased: box, outcome: outcome)
            }
            return
        }
        #endif
        try await key.close(erased: box, outcome: outcome)
    }

    /// Ends a scope opened on a root: closes its services with `outcome` and counts it closed.
    ///
    /// A scope that built nothing ends without suspending, and without an async call.
    ///
    /// Close failures are thrown only when `outcome` is success, so that work whose services
    /// did not close cleanly (a transaction that did not commit) never reports success; other
    /// outcomes already carry an error of their own, and their failures go to the root's
    /// close-error handler.
    @usableFromInline
    nonisolated(nonsending) package func end(_ outcome: ScopeOutcome) async throws(ScopeCloseError) {
        let failures = await close(outcome)
        #if Instrumentation
        registry.instruments?.scopeEnded(outcome)
        #endif
        root.scopeClosed()
        guard !failures.isEmpty else { return }
        let error = ScopeCloseError(failures: failures, outcome: outcome)
        guard outcome.isSuccess else { return registry.onCloseError(error) }
        throw error
    }

    /// Whether `node` is the calling task's current node, read in place.
    private static func isCurrent(_ node: ScopeNodeBuffer) -> Bool {
        ScopedValues.withCurrent { $0.node.buffer === node }
    }

    /// Whether `node` is the calling task's current node; `nil` when there is no node.
    private static func isCurrent(_ node: borrowing ScopeNodeBuffer?) -> Bool? {
        switch node {
        case .some(let node): isCurrent(node)
        case .none: nil
        }
    }

    /// Runs `body` with `node` as the current scope's values; `nil` means it is already.
    ///
    /// Constructions and closes see the scope they belong to. Where `node` is already current
    /// (a service read, or closed by `withScope`, inside its own scope: the common case) no
    /// task-local is pushed.
    nonisolated(nonsending) private static func withCurrent<R>(
        _ node: ScopeNode?,
        _ body: () async throws -> R
    ) async throws -> R {
        guard let node, !isCurrent(node.buffer) else { return try await body() }
        return try await ScopedValues.taskLocalNode.withValue(node, operation: body)
    }

    /// The built entry with the largest `order` below `limit`, or `nil`.
    private static func newest(
        in entries: SmallList<Entry>,
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

    /// Counts a scope opened on this root.
    package func scopeOpened() {
        #if Instrumentation
        registry.instruments?.scopeOpened()
        #endif
        openScopes.wrappingAdd(1, ordering: .relaxed)
    }

    /// Counts a scope on this root as closed, waking whoever waits for the root to drain.
    package func scopeClosed() {
        // Acquiring-releasing, so that a drain that sees 0 also sees what the scope did.
        guard openScopes.wrappingSubtract(1, ordering: .acquiringAndReleasing).newValue == 0 else { return }
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            // A scope may have opened since: then its close wakes the waiters.
            guard openScopes.load(ordering: .acquiring) == 0 else { return [] }
            return state.drainWaiters.take() ?? []
        }
        for waiter in waiters { waiter.resume() }
    }

    /// The number of scopes opened on this root and not yet closed.
    package var openScopeCount: Int { openScopes.load(ordering: .acquiring) }

    /// Returns once every scope opened on this root has closed.
    package func drain() async {
        await withCheckedContinuation { continuation in
            // Checked under the lock that `scopeClosed` takes after counting down to 0, so a
            // waiter added here is either woken by it or sees 0 itself.
            let drained = state.withLock { state in
                if openScopes.load(ordering: .acquiring) == 0 { return true }
                state.drainWaiters = (state.drainWaiters ?? []) + [continuation]
                return false
            }
            if drained { continuation.resume() }
        }
    }
}

/// The slot a root publishes a built app service in: set once, read without a lock.
private final class PublishedService: Sendable {
    let box = AtomicLazyReference<AnyValueBox>()
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
