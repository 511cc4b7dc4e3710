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
