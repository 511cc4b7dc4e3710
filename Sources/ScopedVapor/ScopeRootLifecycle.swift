public import Scoped
public import Vapor

/// The application root's life in a Vapor application: validated before the server binds its
/// port, shut down when the application shuts down.
///
/// ```swift
/// app.lifecycle.use(ScopeRootLifecycle(root: root))
/// app.middleware.use(RequestScopeMiddleware(root: root))
/// try await app.execute()
/// ```
///
/// A root that fails validation stops the application's boot with a `ScopeValidationError`
/// that lists every problem, before any request is served. At shutdown the root's app services
/// close, newest first, after Vapor has stopped its server.
public struct ScopeRootLifecycle: LifecycleHandler {
    private let root: ScopeRoot

    /// Ties `root`'s validation and shutdown to the application's boot and shutdown.
    public init(root: ScopeRoot) {
        self.root = root
    }

    /// Validates the root; throws a `ScopeValidationError` when a service cannot be built.
    ///
    /// `@concurrent`, as Vapor's requirement is: Vapor is built without
    /// `NonisolatedNonsendingByDefault`, which this package enables.
    @concurrent
    public func willBootAsync(_ application: Application) async throws {
        let problems = await root.validate()
        guard problems.isEmpty else { throw ScopeValidationError(problems: problems) }
    }

    /// Shuts the root down: its app services close, newest first.
    @concurrent
    public func shutdownAsync(_ application: Application) async {
        await root.shutdown()
    }
}
