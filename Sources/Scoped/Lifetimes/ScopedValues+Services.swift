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
    @inlinable
    public func service<K: ScopedServiceKey>(_ key: K.Type) async throws -> K.Value {
        // Inlined into the caller, and so specialized for `K`: only the construction and the
        // final cast meet the value's type. The rest is `serviceBox`, which works on boxes.
        let box = try await serviceBox(key) { ServiceBox<K>(try await K.makeValue()) }
        return ScopeNodeBuffer.load(box, as: K.Value.self)
    }

    /// The service for `key`, in its box: one set with ``set(_:to:)``, one a reload's recording
    /// provides, or the one its owning scope built, with `make` now if not yet.
    ///
    /// Not generic: an async function generic over the value's type keeps its locals in the
    /// task's allocator when, called across modules, it is not specialized.
    @usableFromInline
    nonisolated(nonsending) func serviceBox(
        _ key: any ScopedServiceKey.Type,
        make: () async throws -> AnyValueBox
    ) async throws -> AnyValueBox {
        // Only `set(_:to:)` stores under a service key, always a value of the key's type.
        if let storage = node.storage(for: ObjectIdentifier(key)) { return storage }
        if let observer = node.observer, let provided = observer.providedServiceBox(key) { return provided }
        guard let scope else { throw ScopedError.outsideRoot(entry: key.name) }
        let link = ConstructionChain.Link(erasing: key)
        guard let owner = scope.owner(at: link.lifetime) else {
            try scope.checkRefusedRead(of: link)
            throw link.lifetime == .tenant ? ScopedError.outsideTenant(entry: key.name) : .outsideScope(entry: key.name)
        }
        return try await owner.service(link, node: node.buffer.ownNode(of: owner), make: make)
    }

    /// Whether these values belong to a scope that owns ``ScopedLifetime/scope`` services: one
    /// opened with `withScope` or `openScope` (a request's, a job's, a test's), not a root or a
    /// tenant, and not outside every root.
    ///
    /// What a database layer asks before it routes a statement to the scope's transaction.
    public var isInScope: Bool { scope?.level == .scope }

    /// The ``ScopedLifetime/scope`` service `key` names, without waiting: the innermost
    /// scope's (or what a test set), made with `make` now if that scope has not built it yet.
    ///
    /// For a caller that cannot wait, such as a future-based database driver, and a service
    /// whose making is cheap, reads nothing and cannot fail (`make`, not `K.makeValue()`). The
    /// scope closes it like any service it built; its making is not traced as a build.
    ///
    /// - Returns: `nil` outside a scope that owns ``ScopedLifetime/scope`` services, and while
    ///   another task builds the service with ``service(_:)``.
    /// - Parameters:
    ///   - key: The service's key.
    ///   - make: Makes the service, if the scope has not built it yet.
    /// - Throws: `ScopedError.scopeEnded(entry:)` once the scope has ended.
    public func scopeServiceWithoutWaiting<K: ScopedServiceKey>(
        _ key: K.Type,
        makingWith make: () -> K.Value
    ) throws -> K.Value? {
        if let storage = node.storage(for: ObjectIdentifier(key)) {
            return ScopeNodeBuffer.load(storage, as: K.Value.self)
        }
        guard K.lifetime == .scope, isInScope,
            let box = try scope?.serviceMadeWithoutWaiting(key, make: { ServiceBox<K>(make()) })
        else { return nil }
        return ScopeNodeBuffer.load(box, as: K.Value.self)
    }

    /// Provides the service for `key` from outside: reads in this scope and below return
    /// `value` instead of building one, and no scope closes it.
    public mutating func set<K: ScopedServiceKey>(_ key: K.Type, to value: K.Value) {
        store(value, for: key, kind: .service, lifetime: K.lifetime)
    }
}
