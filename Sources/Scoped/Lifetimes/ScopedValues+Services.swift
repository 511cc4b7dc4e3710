extension ScopedValues {
    /// The service for `key`, built on first use by the scope that owns it.
    ///
    /// A method, not a subscript: `self[key]` reads an entry's value, which never suspends or
    /// throws; a service may be built here, and its construction may suspend and fail:
    ///
    /// ```swift
    /// let session = try await ScopedValues.current.service(SessionKey.self)
    /// ```
    ///
    /// A service key's declaration usually comes with a property that reads it (see
    /// ``ScopedServiceKey``), as an `@Entry` declares one for a value.
    ///
    /// An instance set with ``set(_:to:)`` wins. Otherwise an ``ScopedLifetime/app`` service
    /// is built once by the application root, a ``ScopedLifetime/tenant`` service once by the
    /// scope's tenant, and a ``ScopedLifetime/scope`` service once by the innermost scope
    /// opened with `withScope`.
    ///
    /// - Throws: what the service's construction throws (for a tenant service, wrapped in a
    ///   ``TenantUnavailableError``), or a ``ScopedError`` for a cycle, a captive dependency, a
    ///   scoped service read outside any scope, a tenant service read in a scope of no tenant,
    ///   or any service read outside every application root.
    public func service<K: ScopedServiceKey>(_ key: K.Type) async throws -> K.Value {
        // Only `set(_:to:)` stores under a service key, always a `K.Value`. Asked without a
        // type first: this code is not specialized for `K`, and most reads find nothing.
        if let storage = node.storage(for: ObjectIdentifier(key)) {
            return ScopeNodeBuffer.load(storage, as: K.Value.self)
        }
        if let observer = node.observer, let provided = observer.providedService(key) { return provided }
        guard let scope else { throw ScopedError.outsideRoot(entry: K.name) }
        let owner: ScopeContext
        switch K.lifetime {
        case .app:
            owner = scope.root
        case .tenant:
            guard let tenant = scope.tenant else {
                try scope.registry.dependencies.check(.init(key), in: .current, recordingRead: false)
                throw ScopedError.outsideTenant(entry: K.name)
            }
            owner = tenant
        case .scope:
            guard scope.lifetime == .scope else {
                try scope.registry.dependencies.check(.init(key), in: .current, recordingRead: false)
                throw ScopedError.outsideScope(entry: K.name)
            }
            owner = scope
        }
        let box = try await owner.service(.init(key)) { ValueBox(try await K.makeValue()) }
        return (box as! ValueBox<K.Value>).value
    }

    /// Provides the service for `key` from outside: reads in this scope and below return
    /// `value` instead of building one, and no scope closes it.
    public mutating func set<K: ScopedServiceKey>(_ key: K.Type, to value: K.Value) {
        store(value, for: key, kind: .service, lifetime: K.lifetime)
    }
}
