public import Logging
public import Scoped

extension ScopeRoot {
    /// Runs `body` while every app service of this root whose value is a swift-service-lifecycle
    /// `Service` runs beside it; then shuts the root down, and only then stops those services.
    ///
    /// Some app services work only while they run: postgres-nio's `PostgresClient` serves no
    /// query before its `run()` has started. This runs each such service from the moment the
    /// root builds it (services already built are started at once). In a Hummingbird or other
    /// service-lifecycle application, give the application a ``ScopeRootService`` instead; use
    /// this for a command or a job that runs once:
    ///
    /// ```swift
    /// let deleted = try await root.withRunningServices(logger: logger) {
    ///     try await root.withScope { try await pruneHistory() }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - logger: where a service whose `run()` throws is reported.
    ///   - body: the work to do while the services run.
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws, after the root has shut down and the services stopped.
    public func withRunningServices<Result: Sendable>(
        logger: Logger,
        _ body: () async throws -> Result
    ) async throws -> Result {
        let running = RunningServices(root: self, logger: logger)
        let result: Swift.Result<Result, any Error>
        do {
            result = .success(try await body())
        } catch {
            result = .failure(error)
        }
        await shutdown()
        await running.stop()
        return try result.get()
    }
}
