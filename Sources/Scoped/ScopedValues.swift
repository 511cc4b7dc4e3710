/// The values visible to code running in the current scope.
///
/// `ScopedValues` is to a server's call tree what SwiftUI's `EnvironmentValues` is to a view
/// tree. Declare entries in an extension with ``Entry()``, read them with ``Scoped`` or
/// ``current``, and override them for a subtree of calls with
/// ``withScopedValues(_:operation:)-1ajzq``:
///
/// ```swift
/// extension ScopedValues {
///     @Entry var copyright: String = "© Scoped"
/// }
/// ```
///
/// ```swift
/// withScopedValues({ $0.copyright = "© Request" }) {
///     print(ScopedValues.current.copyright)  // © Request
/// }
/// ```
///
/// The nearest override wins, and only below it. Reading an entry costs one task-local read
/// and at most two hash probes, however deep scopes nest and however many entries they set.
public struct ScopedValues: Sendable {
    /// The scope's entries, depth and lifetime scope; copied on the first write.
    ///
    /// The only stored property: values that are one reference are passed in a register. A
    /// read copies the task's node out of the task-local (one retain and release).
    @usableFromInline
    var node: ScopeNode

    /// Creates values in which every entry reads its default.
    public init() {
        node = .empty
    }

    @inlinable
    init(node: ScopeNode) {
        self.node = node
    }

    /// The task-local that binds the current scope's node: what `withScopedValues` and
    /// `withScope` push, and what reads find in place (`withCurrent`).
    ///
    /// Declared without the `@TaskLocal` wrapper so that inlinable code can bind it.
    @usableFromInline
    static let taskLocalNode = TaskLocal<ScopeNode>(wrappedValue: .empty)

    /// The values of the scope the calling task runs in.
    ///
    /// Child tasks (`async let`, task groups and `Task {}`) inherit the scope they were started
    /// in. `Task.detached` does not: it reads the root defaults. To carry a scope into escaping
    /// work, capture `ScopedValues.current` and bind it there with
    /// ``withScopedValues(_:operation:)-23sgc``.
    public static var current: ScopedValues {
        @inlinable get { withCurrent { $0 } }
    }

    /// The current values when the calling task runs in a test scope, and defaults otherwise:
    /// what a root starts from when its creator does not say.
    static var testScopeOrDefaults: ScopedValues {
        let current = ScopedValues.current
        return current.isTestScope ? current : ScopedValues()
    }

    /// Whether these values belong to a test scope (opened by ScopedTesting's `withTestScope` or
    /// its `.scoped` trait), or to a root created in one.
    ///
    /// What a database layer asks before it uses a database a test lent to the scope, so that
    /// outside tests it does not even read the test's entry:
    ///
    /// ```swift
    /// if values.isTestScope, let lent = values[LentTestDatabaseKey.self] { return lent }
    /// ```
    public var isTestScope: Bool { scope?.registry.isInTest == true }

    /// Whether these values belong to a test's own root (made by ScopedTesting's `withTestScope`
    /// or its `.scoped` trait): the test's scope and the scopes opened within it, not a root the
    /// code under test built inside the test, such as an application serving a request.
    ///
    /// A database layer tells a test's own statements, which run in the test's transaction, from
    /// a request's, which run in the request's own.
    public var isOnTestsOwnRoot: Bool { scope?.registry.isTestRoot == true }

    /// The identity of the scope these values belong to (a root's, a tenant's, or a scope opened
    /// on one): the same for every value read in that scope, however many
    /// ``withScopedValues(_:operation:)-23sgc`` calls deep, and different from every other
    /// scope's while it is open; `nil` outside every root.
    ///
    /// What a ``ScopeObserver`` keys the scopes it tracks by, from
    /// ``ScopeObserver/scopeOpened(_:handedOffAt:)`` to ``ScopeObserver/scopeEnded(_:outcome:)``.
    public var scopeID: ObjectIdentifier? { scope.map(ObjectIdentifier.init) }

    /// The innermost scope that owns services: a scope opened with `withScope`, or a root.
    var scope: ServiceOwner? { node.scope }

    /// Reads or sets the value of the entry `key`.
    ///
    /// Reading returns the value set by the nearest enclosing scope, or `K.defaultValue`.
    public subscript<K: ScopedKey>(key: K.Type) -> K.Value {
        @inlinable get {
            // The table stores a `K.Value` for `K`; only this subscript writes it.
            node.value(for: ObjectIdentifier(key), as: K.Value.self) {
                if let observer = node.observer { return observer.defaultValue(for: key) }
                return K.defaultValue
            }
        }
        @inlinable set {
            store(newValue, for: key, kind: .value)
        }
    }

    /// Stores `value` under `key`, copying the node first unless it is uniquely ours.
    @inlinable
    mutating func store<V: Sendable>(
        _ value: V,
        for key: Any.Type,
        kind: ScopedValues.EntryKind,
        lifetime: ScopedLifetime? = nil
    ) {
        if !node.isUnique() { node = node.copy() }
        node.set(value, for: key, kind: kind, lifetime: lifetime)
    }

    /// Stores `object` under its type, for reading with `@Scoped(T.self)`.
    ///
    /// This is SwiftUI's `.environment(object)`: one value per type, found by the type alone.
    @inlinable
    public mutating func set<T: Sendable>(_ object: T) {
        store(object, for: T.self, kind: .object)
    }

    /// The object of type `T` set by the nearest enclosing scope, or `nil` if none was.
    @inlinable
    public func object<T: Sendable>(_ type: T.Type) -> T? {
        // Only `set(_:)` stores under a type's own identity, always a `T`.
        guard let storage = node.storage(for: ObjectIdentifier(type)) else { return node.observer?.object(type) }
        return ScopeNodeBuffer.load(storage, as: T.self)
    }

    /// The object of type `T` set by the nearest enclosing scope.
    ///
    /// - Throws: ``ScopedError/missingObject(type:)`` when no scope set one; its description
    ///   names the type and says how to provide it.
    public func require<T: Sendable>(_ type: T.Type) throws -> T {
        guard let object = object(type) else { throw ScopedError.missingObject(type: String(reflecting: type)) }
        return object
    }

    /// The name diagnostics show for a key: its ``ScopedKey/name``, else its type's name.
    @usableFromInline
    static func entryName(of key: Any.Type) -> String {
        (key as? any ScopedKey.Type)?.name ?? String(describing: key)
    }
}

extension ScopedValues {
    /// Calls `body` with the values the calling task (or, outside a task, thread) is bound to,
    /// read through the task-local's public `get()`.
    ///
    /// `body` must not write to them: it gets a copy, and a write would copy the node.
    @inlinable
    @inline(__always)
    static func withCurrent<R>(_ body: (inout ScopedValues) throws -> R) rethrows -> R {
        var values = ScopedValues(node: taskLocalNode.get())
        return try body(&values)
    }
}

/// Runs `operation` in a scope whose values are the current ones changed by `update`.
///
/// The changes are seen by `operation`, everything it calls and every child task it starts,
/// and by nothing else: siblings and the caller keep the values they had.
///
/// ```swift
/// let title = withScopedValues({ $0.copyright = "© Request" }) {
///     ScopedValues.current.copyright
/// }
/// ```
@inlinable
public func withScopedValues<R>(
    _ update: (inout ScopedValues) throws -> Void,
    operation: () throws -> R
) rethrows -> R {
    var values = ScopedValues.currentChild()
    try update(&values)
    return try ScopedValues.taskLocalNode.withValue(values.node, operation: operation)
}

/// Runs the asynchronous `operation` in a scope whose values are the current ones changed by `update`.
///
/// The changes are seen by `operation`, everything it awaits and every child task it starts
/// (`async let`, task groups, `Task {}`), and by nothing else.
@inlinable
nonisolated(nonsending) public func withScopedValues<R>(
    _ update: (inout ScopedValues) throws -> Void,
    operation: () async throws -> R
) async rethrows -> R {
    var values = ScopedValues.currentChild()
    try update(&values)
    return try await ScopedValues.taskLocalNode.withValue(values.node, operation: operation)
}

/// Runs `operation` with `values` as the current scope.
///
/// This carries a captured scope into work that does not inherit it, such as `Task.detached`
/// or a callback run by another library:
///
/// ```swift
/// let values = ScopedValues.current
/// Task.detached {
///     withScopedValues(values) { audit.record() }
/// }
/// ```
@inlinable
public func withScopedValues<R>(_ values: ScopedValues, operation: () throws -> R) rethrows -> R {
    try ScopedValues.taskLocalNode.withValue(values.node, operation: operation)
}

/// Runs the asynchronous `operation` with `values` as the current scope.
@inlinable
nonisolated(nonsending) public func withScopedValues<R>(
    _ values: ScopedValues,
    operation: () async throws -> R
) async rethrows -> R {
    try await ScopedValues.taskLocalNode.withValue(values.node, operation: operation)
}

extension ScopedValues {
    /// The values of a child scope of these: one level deeper, in `scope` (or in this scope),
    /// marking the values set through them as set at that depth.
    @inlinable
    func child(scope: ServiceOwner? = nil) -> ScopedValues {
        ScopedValues(node: node.child(scope: scope ?? node.scope))
    }

    /// The values of a child scope of the current one, made without copying the current
    /// values first.
    @inlinable
    static func currentChild() -> ScopedValues {
        withCurrent { $0.child() }
    }
}
