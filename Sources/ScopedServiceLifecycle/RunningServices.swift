import Logging
import Scoped
import ServiceLifecycle
import Synchronization

/// The app services of a root that are swift-service-lifecycle `Service`s, each running from
/// the moment the root builds it until ``stop()``.
///
/// Each service's `run()` starts in an immediate task inside the build that produced it, so it
/// has begun before the code that asked for the service goes on: postgres-nio's client, for
/// one, is running before the first connection is leased from it, and never warns that it is
/// not.
final class RunningServices: Sendable {
    private struct State {
        var tasks: [Task<Void, Never>] = []
        var stopped = false
    }

    private let state = Mutex(State())
    private let logger: Logger

    /// Starts every `Service` that `root` has built and every one it builds from now on.
    init(root: ScopeRoot, logger: Logger) {
        self.logger = logger
        let built = root.context.watchBuiltServices { [weak self] value in
            if let service = value as? any Service { self?.start(service) }
        }
        for case let service as any Service in built { start(service) }
    }

    private func start(_ service: any Service) {
        guard !state.withLock({ $0.stopped }) else { return }
        // Started outside the lock: the task runs here until its first suspension.
        let logger = self.logger
        let task = Task.immediate {
            do {
                try await service.run()
            } catch is CancellationError {
            } catch {
                logger.error("App service \(type(of: service)) stopped with an error: \(error)")
            }
        }
        let kept = state.withLock { state in
            if !state.stopped { state.tasks.append(task) }
            return !state.stopped
        }
        // Built while the services were stopping: it must not outlive them.
        if !kept { task.cancel() }
    }

    /// Cancels every running service and waits until each `run()` has returned.
    func stop() async {
        let tasks = state.withLock { state in
            state.stopped = true
            return state.tasks
        }
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
    }
}
