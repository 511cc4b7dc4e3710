import Scoped

/// Which app services a reload carries over from the root it replaces.
extension ScopeRoot {
    /// Adopts each app service `previous` built that this root would build the same.
    ///
    /// A service is the same when every entry, object and given service it read while it was
    /// built holds an equal value here, and every service it read was carried over too. The
    /// others are left for this root to build. What each read is known from `previous`'s
    /// ``ReloadRecorder``: without one, every service is rebuilt.
    ///
    /// Adopted services are not closed by this root until `ScopeRoot.takeOverClosing(of:from:)`:
    /// a reload that is rejected leaves them to `previous`.
    func carryOver(from previous: ScopeRoot) -> (carried: [BuiltService], rebuilt: [ScopeReload.Rebuilt]) {
        let recorder = previous.observers(RootReloadRecorder.self).first
        var carried: [BuiltService] = []
        var carriedNames: Set<String> = []
        var rebuilt: [ScopeReload.Rebuilt] = []
        for service in previous.builtServices {
            let name = service.key.name
            let reason: String?
            if let read = recorder?.reads(of: service.key) {
                if let change = InputComparison.firstChange(of: read.inputs, in: self) {
                    reason = "\(change) changed"
                } else if let dependency = read.services.first(where: { !carriedNames.contains($0.name) }) {
                    reason = "\(dependency.name) was rebuilt"
                } else if adopt(service, reading: read.inputs, services: read.services) {
                    reason = nil
                } else {
                    reason = "the new root built it already"
                }
            } else {
                reason =
                    recorder == nil
                    ? "what it read is not known: the replaced root has no ReloadRecorder"
                    : "what it read is not known"
            }
            if let reason {
                rebuilt.append(.init(service: name, reason: reason))
            } else {
                carried.append(service)
                carriedNames.insert(name)
            }
        }
        return (carried, rebuilt)
    }
}
