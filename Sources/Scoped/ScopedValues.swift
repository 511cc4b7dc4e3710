/// The values visible to code running in the current scope.
///
/// `ScopedValues` is to a server's call tree what SwiftUI's `EnvironmentValues` is to a view
/// tree. Declare entries in an extension with ``Entry()``, read them with ``Scoped`` or
/// ``current``, and override them for a subtree of calls with
/// ``withScopedValues(_:operation:)-(_,()->R)``:
///
/// ```swift
/// extension ScopedValues {
///     @Entry var copyright: String = "© Scoped"
/// }
///
/// withScopedValues({ $0.copyright = "© Request" }) {
///     print(ScopedValues.current.copyright)  // © Request
/// }
/// ```
///
/// The nearest override wins, and only below it. Reading an entry costs one task-local read
/// and one hash lookup, however deep scopes nest and however many entries they set.
public struct ScopedValues: Sendable {
    /// Every entry set by this scope and its ancestors.
    package var overrides = OverrideTable()
    /// How many scopes were opened below the root to reach this one.
    package var depth = 0
    /// The origin stamped on values set through this copy.
    package var origin = EntryOrigin.root
    /// The variant being applied, stamped on values set through this copy while it is.
    package var variant: String? = nil
    /// The innermost scope that owns services: a scope opened with `withScope`, or a root.
    package var scope: ScopeContext? = nil

    /// Creates values in which every entry reads its default.
    public init() {}

    @TaskLocal
    package static var taskLocal = ScopedValues()

    /// The values of the scope the calling task runs in.
    ///
    /// Child tasks (`async let`, task groups and `Task {}`) inherit the scope they were started
    /// in. `Task.detached` does not: it reads the root defaults. To carry a scope into escaping
    /// work, capture `ScopedValues.current` and bind it there with
    /// ``withScopedValues(_:operation:)-(ScopedValues,_)``.
    public static var current: ScopedValues {
        @inline(__always) get { taskLocal }
    }

    /// Reads or sets the value of the entry `key`.
    ///
    /// Reading returns the value set by the nearest enclosing scope, or `K.defaultValue`.
    public subscript<K: ScopedKey>(key: K.Type) -> K.Value {
        get {
            if let box = overrides.box(for: ObjectIdentifier(key)) {
                // The table stores a `ValueBox<K.Value>` for `K`; only this subscript writes it.
                return unsafeDowncast(box, to: ValueBox<K.Value>.self).value
            }
            if let observer = scope?.registry.testObserver, let testValue = K.testValue {
                observer.readLiveDefault(Self.entryName(of: key))
                return testValue
            }
            return K.defaultValue
        }
        set {
            overrides.set(box(newValue, name: Self.entryName(of: key), kind: .value), for: ObjectIdentifier(key))
        }
    }

    /// Stores `object` under its type, for reading with `@Scoped(T.self)`.
    ///
    /// This is SwiftUI's `.environment(object)`: one value per type, found by the type alone.
    public mutating func set<T: Sendable>(_ object: T) {
        overrides.set(box(object, name: String(reflecting: T.self), kind: .object), for: ObjectIdentifier(T.self))
    }

    /// The object of type `T` set by the nearest enclosing scope, or `nil` if none was.
    public func object<T: Sendable>(_ type: T.Type) -> T? {
        guard let box = overrides.box(for: ObjectIdentifier(type)) else { return nil }
        // Only `set(_:)` stores under a type's own identity, always as a `ValueBox<T>`.
        return unsafeDowncast(box, to: ValueBox<T>.self).value
    }

    /// The object of type `T` set by the nearest enclosing scope.
    ///
    /// - Throws: ``ScopedError/missingObject(type:)`` when no scope set one; its description
    ///   names the type and says how to provide it.
    public func require<T: Sendable>(_ type: T.Type) throws -> T {
        guard let object = object(type) else { throw ScopedError.missingObject(type: String(reflecting: type)) }
        return object
    }

    /// The service for `key`, built on first use by the scope that owns it.
    ///
    /// An instance set with ``set(_:to:)`` wins. Otherwise an ``ScopedLifetime/app`` service
    /// is built once by the application root, and a ``ScopedLifetime/scope`` service once by
    /// the innermost scope opened with `withScope`.
    ///
    /// - Throws: what the service's construction throws, or a ``ScopedError`` for a cycle, a
    ///   captive dependency, or a scoped service read outside any scope.
    public subscript<K: ScopedServiceKey>(key: K.Type) -> K.Value {
        get async throws {
            if let box = overrides.box(for: ObjectIdentifier(key)) {
                // Only `set(_:to:)` stores under a service key, always as a `ValueBox<K.Value>`.
                return unsafeDowncast(box, to: ValueBox<K.Value>.self).value
            }
            switch K.lifetime {
            case .app:
                return try await (scope?.root ?? ScopeRoot.implicit.context).service(key)
            case .scope:
                guard let scope, scope.lifetime == .scope else {
                    try ConstructionChain.current.check(.init(key: ObjectIdentifier(key), name: K.name, lifetime: .scope))
                    throw ScopedError.outsideScope(entry: K.name)
                }
                return try await scope.service(key)
            }
        }
    }

    /// Provides the service for `key` from outside: reads in this scope and below return
    /// `value` instead of building one, and no scope closes it.
    public mutating func set<K: ScopedServiceKey>(_ key: K.Type, to value: K.Value) {
        overrides.set(box(value, name: K.name, kind: EntryKind(K.lifetime)), for: ObjectIdentifier(key))
    }

    /// Applies changes chosen by configuration; diagnostics show their origin as
    /// ``EntryOrigin/configuration``.
    public mutating func configure(_ body: (inout ScopedValues) throws -> Void) rethrows {
        let saved = origin
        origin = .configuration
        defer { origin = saved }
        try body(&self)
    }

    /// Sets `entry` to its variant named `variant`, registered on the application root.
    ///
    /// - Throws: ``ScopedError/unknownVariant(entry:variant:known:)`` naming the variants that
    ///   exist, when the root registered no such variant.
    public mutating func selectVariant(_ variant: String, of entry: String) throws {
        let variants = scope?.registry.variants ?? ScopedVariants()
        guard let apply = variants.variant(variant, of: entry) else {
            throw ScopedError.unknownVariant(entry: entry, variant: variant, known: variants.names(of: entry))
        }
        let saved = self.variant
        self.variant = variant
        defer { self.variant = saved }
        apply(&self)
    }

    private func box<Value: Sendable>(_ value: Value, name: String, kind: EntryKind) -> ValueBox<Value> {
        ValueBox(value, name: name, kind: kind, origin: origin, variant: variant)
    }

    /// The name diagnostics show for a key: the property name for `@Entry` keys, else the type.
    package static func entryName(of key: Any.Type) -> String {
        let name = String(describing: key)
        return name.hasPrefix("__Key_") ? String(name.dropFirst(6)) : name
    }
}
