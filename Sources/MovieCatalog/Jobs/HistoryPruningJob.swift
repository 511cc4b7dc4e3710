package import Logging
package import Scoped
import ScopedDatabase
import ScopedHummingbird
import ScopedSQLite
import ServiceLifecycle

/// A periodic job that deletes old entries of the movie history, each run in a scope of its
/// own.
///
/// A run is a unit of work like a request: ``runOnce()`` opens a scope on the root with
/// `withScope`, so the run's session and its write transaction are its own, committed when the
/// run returns and rolled back when it throws. As a swift-service-lifecycle `Service`, the job
/// runs beside the HTTP server and stops at graceful shutdown, between two runs.
package struct HistoryPruningJob: Service {
    private let root: ReloadableScopeRoot
    private let interval: Duration
    private let retention: Duration
    private let logger: Logger
    private let ready: @Sendable () async throws -> Void

    /// A job on `root` that runs every `interval` and keeps `retention` of history.
    ///
    /// - Parameters:
    ///   - root: the application root each run opens its scope on: the one current when it starts.
    ///   - interval: the time between two runs.
    ///   - retention: how old a history entry may get.
    ///   - logger: where runs that delete entries or fail are logged.
    ///   - ready: returns when the root may be used (its validation passed); the job's first run
    ///     waits for it, and the job ends without a run when it throws.
    package init(
        root: ReloadableScopeRoot,
        interval: Duration = .seconds(3600),
        retention: Duration,
        logger: Logger,
        ready: @escaping @Sendable () async throws -> Void = {}
    ) {
        self.root = root
        self.interval = interval
        self.retention = retention
        self.logger = logger
        self.ready = ready
    }

    /// A job on `root` alone, which no reload replaces: a command's.
    package init(root: ScopeRoot, retention: Duration, logger: Logger) {
        self.init(root: ReloadableScopeRoot(root), retention: retention, logger: logger)
    }

    /// Runs the job until graceful shutdown: a run once the root is ready, then one every
    /// `interval`.
    ///
    /// A run that fails is logged, and the next one runs on schedule.
    package func run() async throws {
        await cancelWhenGracefulShutdown {
            guard (try? await ready()) != nil else { return }
            while !Task.isCancelled {
                do {
                    let deleted = try await runOnce()
                    if deleted > 0 { logger.info("Pruned \(deleted) history entries") }
                } catch {
                    logger.warning("Pruning the history failed: \(error)")
                }
                try? await Task.sleep(for: interval)
            }
        }
    }

    /// One run, in its own scope and write transaction.
    ///
    /// - Returns: how many history entries it deleted.
    package func runOnce() async throws -> Int {
        try await root.withScope({
            $0.transactionMode = .readWrite
            $0.requestID = "job:history-pruning"
        }) {
            try await ScopedValues.current.movieHistory.prune(olderThan: retention)
        }
    }
}
