package import Logging
package import Scoped
package import ScopedReload
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
    /// With tenants: the tenants whose history to prune, each in a scope of its own; `nil`
    /// without tenants.
    private let tenants: (@Sendable () async throws -> [TenantID])?

    /// A job on `root` that runs every `interval` and keeps `retention` of history.
    ///
    /// - Parameters:
    ///   - root: the application root each run opens its scope on: the one current when it starts.
    ///   - interval: the time between two runs.
    ///   - retention: how old a history entry may get.
    ///   - logger: where runs that delete entries or fail are logged.
    ///   - tenants: with tenants, the tenants whose history each run prunes, each in a scope
    ///     and transaction of its own; `nil` (the default) without tenants.
    ///   - ready: returns when the root may be used (its validation passed); the job's first run
    ///     waits for it, and the job ends without a run when it throws.
    package init(
        root: ReloadableScopeRoot,
        interval: Duration = .seconds(3600),
        retention: Duration,
        logger: Logger,
        tenants: (@Sendable () async throws -> [TenantID])? = nil,
        ready: @escaping @Sendable () async throws -> Void = {}
    ) {
        self.root = root
        self.interval = interval
        self.retention = retention
        self.logger = logger
        self.tenants = tenants
        self.ready = ready
    }

    /// A job on `root` alone, which no reload replaces: a command's.
    package init(
        root: ScopeRoot,
        retention: Duration,
        logger: Logger,
        tenants: (@Sendable () async throws -> [TenantID])? = nil
    ) {
        self.init(root: ReloadableScopeRoot(root), retention: retention, logger: logger, tenants: tenants)
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

    /// One run, in its own scope and write transaction; with tenants, one per tenant.
    ///
    /// - Returns: how many history entries it deleted.
    package func runOnce() async throws -> Int {
        let update: @Sendable (inout ScopedValues) -> Void = {
            $0.transactionMode = .readWrite
            $0.requestID = "job:history-pruning"
        }
        guard let tenants else {
            return try await root.withScope(update) {
                try await ScopedValues.current.movieHistory.prune(olderThan: retention)
            }
        }
        // A tenant that cannot be pruned now (all tenants busy, its database unavailable) is
        // logged, and tried again next time; the others are pruned.
        var deleted = 0
        for tenant in try await tenants() {
            do {
                deleted += try await root.current.withScope(tenant: tenant, update) {
                    try await ScopedValues.current.movieHistory.prune(olderThan: retention)
                }
            } catch {
                logger.warning("Pruning tenant \(tenant)'s history failed: \(error)")
            }
        }
        return deleted
    }
}
