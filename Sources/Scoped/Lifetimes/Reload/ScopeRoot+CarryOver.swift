/// What a reload asks of the roots it replaces one with by the other: services carried over,
/// then, once the new root is current, their closing moved to it.
extension ScopeRoot {
    /// Adopts each app service `previous` built that this root would build the same.
    ///
    /// A service is the same when every entry it read while it was built holds an equal value
    /// here, and every service it read was carried over too. The others are left for this root
    /// to build.
    ///
    /// Adopted services are not closed by this root until ``commitCarryOver(of:from:)``: a
    /// reload that is rejected leaves them to `previous`.
    func carryOver(from previous: ScopeRoot) -> (carried: [ScopeContext.BuiltService], rebuilt: [ScopeReload.Rebuilt]) {
        let records = previous.context.registry.appServices
        var carried: [ScopeContext.BuiltService] = []
        var carriedNames: Set<String> = []
        var rebuilt: [ScopeReload.Rebuilt] = []
        for service in previous.context.builtServices() {
            let name = service.key.name
            let reason: String?
            if let inputs = records.inputs(of: service.key) {
                if let change = inputs.firstChange(in: values) {
                    reason = "\(change) changed"
                } else if let dependency = records.services(readBy: service.key)
                    .first(where: {
                        !carriedNames.contains($0.name)
                    })
                {
                    reason = "\(dependency.name) was rebuilt"
                } else {
                    reason = nil
                }
            } else {
                reason = "what it read is not known"
            }
            if let reason {
                rebuilt.append(.init(service: name, reason: reason))
            } else if context.adopt(service) {
                context.registry.appServices.carriedOver(service.key, from: records)
                context.registry.observers.carriedOver(service.key, recordedIn: records)
                carried.append(service)
                carriedNames.insert(name)
            } else {
                rebuilt.append(.init(service: name, reason: "the new root built it already"))
            }
        }
        return (carried, rebuilt)
    }

    /// Moves the closing of `carried`, adopted from `previous`, to this root, now current.
    ///
    /// `previous` no longer closes them; this root closes them once `previous`'s scopes, which may
    /// still use them, have closed too.
    func commitCarryOver(of carried: [ScopeContext.BuiltService], from previous: ScopeRoot) {
        previous.rootContext.handOver(Set(carried.map(\.id)))
        rootContext.closeCarriedOver(from: previous.rootContext)
    }
}
