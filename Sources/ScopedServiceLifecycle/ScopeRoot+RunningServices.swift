public import Logging
public import Scoped
import ServiceLifecycle

extension ScopeRoot {
    /// Runs `body` while every app service of this root whose value is a swift-service-lifecycle
    /// `Service` runs beside it; then shuts the root down, and only then stops those services.
    ///
    /// Some app services work only while they run: postgres-nio's `PostgresClient` serves no
    /// query before its `run()` has started. This runs each such service from the moment the
    /// root builds it (services already built are started at once), so wrap the whole life of
    /// the application: validation and migrations, then the server.
    ///
    /// ```swift
    /// try await root.withRunningServices(logger: logger) {
    ///     try await prepare(root)                                   // validation builds the client
    ///     try await ServiceGroup(configuration: serverGroup).run()  // until SIGTERM, drained
    /// }
    /// ```
    ///
    /// The services run outside the server's service group on purpose: a graceful shutdown
    /// stops the server first, the requests in flight drain, `ScopeRoot/shutdown()` waits for
    /// the scopes still open and closes the app services, and only then are the running
    /// services cancelled, so that a request's last commit still has its connection.
    ///
    /// - Parameters:
    ///   - logger: where a service whose `run()` throws is reported.
    ///   - body: the application's life.
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws, after the root has shut down and the services stopped.
    public func withRunningServices<Result: Sendable>(
        logger: Logger,
        _ body: () async throws -> Result
    ) async throws -> Result {
        let (started, starter) = AsyncStream.makeStream(of: (any Service).self)
        let built = context.watchBuiltServices { value in
            if let service = value as? any Service { starter.yield(service) }
        }
        for case let service as any Service in built { starter.yield(service) }
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                await withDiscardingTaskGroup { running in
                    for await service in started {
                        running.addTask {
                            do {
                                try await service.run()
                            } catch is CancellationError {
                            } catch {
                                logger.error("App service \(type(of: service)) stopped with an error: \(error)")
                            }
                        }
                    }
                }
            }
            let result: Swift.Result<Result, any Error>
            do {
                result = .success(try await body())
            } catch {
                result = .failure(error)
            }
            await shutdown()
            starter.finish()
            group.cancelAll()
            try? await group.waitForAll()
            return try result.get()
        }
    }
}
