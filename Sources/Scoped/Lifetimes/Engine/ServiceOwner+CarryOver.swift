import Synchronization

/// A root's built app services as a whole: listed for the root that replaces it, adopted from
/// the root it replaces, and watched by what runs beside them.
///
/// Each step changes the root's services and its ``RootContext`` together, the root's lock
/// taken inside the services' lock.
extension ServiceOwner {
    /// The app services this root built or adopted and still holds, oldest first.
    func builtServices() -> [ScopeRoot.BuiltService] {
        state.withLock { state in
            var built: [(order: Int, service: ScopeRoot.BuiltService)] = []
            for entry in state.entries {
                guard case .built(let box, let key, let order) = entry.slot else { continue }
                built.append((order, ScopeRoot.BuiltService(key: key, id: entry.id, box: box)))
            }
            return built.sorted { $0.order < $1.order }.map(\.service)
        }
    }

    /// Holds `service`, built by the root this one replaces, as built here, without closing it
    /// until ``RootContext/closeCarriedOver(from:)``.
    ///
    /// - Returns: `false` when this is not a root, or it already built or is building the
    ///   service, or has closed: then it is not adopted.
    func adopt(_ service: ScopeRoot.BuiltService) -> Bool {
        guard let root = rootContext else { return false }
        let adopted = state.withLock { state in
            guard !isClosed.load(ordering: .relaxed), state.index(of: service.id) == nil else { return false }
            state.entries.append(
                Entry(id: service.id, slot: .built(service.box, key: service.key, order: state.builtCount))
            )
            state.builtCount += 1
            root.state.withLock { root in
                root.notClosed.insert(service.id)
                root.carriedOver.insert(service.id)
            }
            return true
        }
        if adopted { root.publish(service.box, for: service.id) }
        return adopted
    }

    /// Calls `watcher` with each service this root builds from now on, as it is built.
    ///
    /// Returns the services it has built so far, oldest first: together, every service, once.
    /// Services carried over from a root this one replaced are not among them: they were built,
    /// and are watched, there. `closed` is told each service this root closes, once it has.
    ///
    /// See ``ScopeRoot/watchAppServices(built:closed:)``. A scope that is not a root has no app
    /// services: it returns none and calls neither.
    func watchBuiltServices(
        _ watcher: @escaping @Sendable (any Sendable) -> Void,
        closed: (@Sendable (any Sendable) -> Void)? = nil
    ) -> [any Sendable] {
        guard let root = rootContext else { return [] }
        return state.withLock { state in
            let carriedOver = root.state.withLock { root in
                root.watchers.append(watcher)
                if let closed { root.closeWatchers.append(closed) }
                return root.carriedOver
            }
            var built: [(order: Int, value: any Sendable)] = []
            for entry in state.entries where !carriedOver.contains(entry.id) {
                guard case .built(let box, let key, let order) = entry.slot else { continue }
                built.append((order, key.value(erased: box)))
            }
            return built.sorted { $0.order < $1.order }.map(\.value)
        }
    }
}
