import Synchronization

/// App services handed from a root to the root that replaces it: found, adopted, and their
/// closing moved from one root to the other when the reload commits.
extension ScopeContext {
    /// A built app service of a root.
    struct BuiltService {
        let id: ObjectIdentifier
        let key: any ScopedServiceKey.Type
        let box: AnyValueBox
    }

    /// The app services this root built or adopted and still holds, oldest first.
    func builtServices() -> [BuiltService] {
        state.withLock { state in
            var built: [(order: Int, service: BuiltService)] = []
            for entry in state.entries {
                guard case .built(let box, let key, let order) = entry.slot else { continue }
                built.append((order, BuiltService(id: entry.id, key: key, box: box)))
            }
            return built.sorted { $0.order < $1.order }.map(\.service)
        }
    }

    /// Holds `service`, built by the root this one replaces, as built here, without closing it
    /// until ``closeCarriedOver(from:)``.
    ///
    /// - Returns: `false` when this root already built or is building the service, or has
    ///   closed: then it is not adopted.
    func adopt(_ service: BuiltService) -> Bool {
        let adopted = state.withLock { state in
            guard !state.isClosed, state.index(of: service.id) == nil else { return false }
            state.entries.append(
                Entry(id: service.id, slot: .built(service.box, key: service.key, order: state.builtCount))
            )
            state.builtCount += 1
            state.notClosed.insert(service.id)
            state.carriedOver.insert(service.id)
            return true
        }
        if adopted, let slot = publishedSlot(for: service.id) { _ = slot.box.storeIfNil(service.box) }
        return adopted
    }

    /// From now on, closes the services it adopted from `previous`.
    ///
    /// The reload that adopted them committed. Its shutdown closes them only once `previous`'s scopes, which may still
    /// use them, have closed too.
    func closeCarriedOver(from previous: ScopeContext) {
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
