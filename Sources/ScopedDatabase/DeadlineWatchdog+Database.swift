public import Scoped

extension DeadlineWatchdog {
    /// Runs `body`, calling `expire` if it is still running after `timeout`.
    ///
    /// `expire` must make `body` return soon (interrupt the statement, close the connection);
    /// it runs on the watchdog's queue, at most once.
    ///
    /// - Throws: ``DatabaseTimeoutError`` for `operation` on `entry` when `body` threw after
    ///   its deadline expired; otherwise what `body` throws.
    public func run<R>(
        within timeout: Duration,
        operation: DatabaseTimeoutError.Operation,
        entry: String,
        expire: @escaping @Sendable () -> Void,
        _ body: () async throws -> R
    ) async throws -> R {
        let deadline = register(after: timeout, expire: expire)
        do {
            let result = try await body()
            cancel(deadline)
            return result
        } catch {
            guard cancel(deadline) else {
                throw DatabaseTimeoutError(operation: operation, timeout: timeout, entry: entry)
            }
            throw error
        }
    }
}
