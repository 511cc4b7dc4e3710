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
