import Synchronization

/// The construction of services: waiting for another task's, building, storing and handing
/// them to waiters and watchers.
extension ServiceOwner {
    /// Thrown inside the cache when a construction this reader waited for failed before it
    /// could register; the reader starts over.
    struct Retry: Error {}

    /// Waits for `builder` to finish building the service `link` names.
    ///
    /// - Returns: the service, or `nil` when its construction failed before this task
    ///   waited: then the reader claims it again.
    nonisolated(nonsending) func wait(
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

    /// Builds the service `link` names with `make`, `node` current (`nil`: it is already; `own`,
    /// this owner's own node, either way) and `chain` as the construction chain, stores it, and
    /// hands it to the tasks that waited for it.
    @inline(__always)
    nonisolated(nonsending) func build(
        _ link: ConstructionChain.Link,
        with node: ScopeNode?,
        own: ScopeNodeBuffer,
        chain: ConstructionChain,
        make: () async throws -> AnyValueBox
    ) async throws -> AnyValueBox {
        // A tenant's resources (its file, its schema) are opened only once its previous
        // instance has closed them.
        if let predecessorClose = tenantContext?.predecessorClose {
            await predecessorClose.value
        }
        let box: AnyValueBox
        // App services are built once per root: where an observer takes what they read, their
        // reads are recorded, and their build time is worth two clock reads (in nanoseconds:
        // see `NanosecondClock`).
        let inputs = link.lifetime == .app && registry.observers.observeAppReads ? ServiceInputs() : nil
        let start = inputs != nil ? NanosecondClock.nanoseconds() : nil
        let current = inputs.map { recordingNode(into: $0, over: own) } ?? node
        do {
            if !registry.observers.observeServices, current == nil {
                // A request scope's services are built inside its binding: no binding of their
                // own, and `make` is the operation itself, without a closure around it.
                box = try await ConstructionChain.$current.withValue(chain, operation: make)
            } else {
                box = try await ConstructionChain.$current.withValue(chain) {
                    guard !registry.observers.observeServices else {
                        return try await Self.withCurrent(current) {
                            try await registry.observers.build(link.key, make)
                        }
                    }
                    return try await Self.withCurrent(current, make)
                }
            }
        } catch {
            // A tenant's service that fails leaves that tenant unavailable, and only it.
            let error =
                link.lifetime == .tenant
                ? TenantUnavailableError.wrapping(error, tenant: tenantID, entry: link.key.name) : error
            abandonBuild(of: link, failingWith: error)
            throw error
        }
        if let inputs {
            let took = start.map { Duration.nanoseconds(NanosecondClock.nanoseconds() - $0) }
            registry.observers.appServiceBuilt(link.key, in: took, reading: inputs.all)
        }
        guard store(box, builtFor: link) else {
            try await closeBuiltAfterEnd(box, of: link, with: node)
        }
        return box
    }

    /// The service `key` names: this scope's if built, or made with `make` now and kept as
    /// built, without waiting; `nil` while another task builds it.
    ///
    /// For a service whose making is cheap, reads nothing and cannot fail, needed by a caller
    /// that cannot wait: it is closed with the scope like any other, but its making is not
    /// checked for cycles nor traced as a build.
    ///
    /// - Throws: `ScopedError.scopeEnded(entry:)` once the scope has ended.
    func serviceMadeWithoutWaiting(
        _ key: any ScopedServiceKey.Type,
        make: () -> AnyValueBox
    ) throws -> AnyValueBox? {
        let id = ObjectIdentifier(key)
        return try state.withLock { state in
            if let index = state.index(of: id) {
                guard case .built(let box, _, _) = state.entries[index].slot else { return nil }
                return box
            }
            guard !isClosed.load(ordering: .relaxed) else { throw ScopedError.scopeEnded(entry: key.name) }
            let box = make()
            state.entries.append(Entry(id: id, slot: .built(box, key: key, order: state.builtCount)))
            state.builtCount += 1
            return box
        }
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
            if isClosed.load(ordering: .relaxed) {
                state.entries.remove(at: index)
                return (waiters, nil, false)
            }
            state.entries[index].slot = .built(box, key: link.key, order: state.builtCount)
            state.builtCount += 1
            guard let root = rootContext else { return (waiters, nil, true) }
            let watchers = root.state.withLock { $0.watchers }
            return (waiters, watchers.isEmpty ? nil : watchers, true)
        }
        guard stored else {
            let error = ScopedError.scopeEnded(entry: link.key.name)
            for waiter in waiters ?? [] { waiter.continuation.resume(throwing: error) }
            return false
        }
        rootContext?.publish(box, for: id)
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
            try await Self.withCurrent(node) { try await box.close(as: link.key, outcome: .cancelled) }
        } catch let closeError {
            let failure = ScopeCloseError.Failure(entry: link.key.name, error: closeError)
            registry.onCloseError(ScopeCloseError(failures: [failure], outcome: .cancelled))
        }
        throw ScopedError.scopeEnded(entry: link.key.name)
    }
}
