public import Hummingbird
public import ScopedServiceLifecycle

extension Application {
    /// Runs `service` with the application: the root is validated before the server accepts a
    /// connection, and shut down after the server has stopped and its requests have finished.
    ///
    /// ```swift
    /// var app = Application(router: router)
    /// app.addScopeRoot(ScopeRootService(root: root, logger: logger))
    /// try await app.runService()
    /// ```
    ///
    /// It adds the service to the application's services and makes the server wait for
    /// `ScopeRootService.ready()` before it binds; a root that fails
    /// validation stops the application with a `ScopeValidationError` and the port is
    /// never bound. Add other services that use the root after it, so that they stop before it.
    public mutating func addScopeRoot(_ service: ScopeRootService) {
        addServices(service)
        beforeServerStarts { try await service.ready() }
    }
}
