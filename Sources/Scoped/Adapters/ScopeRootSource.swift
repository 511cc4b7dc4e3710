/// An application root as an adapter opens scopes on it: a ``ScopeRoot``, or ScopedReload's
/// `ReloadableScopeRoot`, whose root changes with each reload.
///
/// An adapter takes `some ScopeRootSource` and reads ``current`` as each request (job, message)
/// begins, so one initializer serves both kinds of root, and a reload takes effect for new
/// requests while requests in flight keep the root they began on:
///
/// ```swift
/// struct ScopeMiddleware {
///     let root: any ScopeRootSource
///     func handle<R>(_ request: () async throws -> R) async throws -> R {
///         try await root.current.withScope { try await request() }
///     }
/// }
/// ```
public protocol ScopeRootSource: Sendable {
    /// The root a scope opened now belongs to.
    var current: ScopeRoot { get }
}

extension ScopeRoot: ScopeRootSource {
    /// This root: a plain root is its own current root.
    public var current: ScopeRoot { self }
}
