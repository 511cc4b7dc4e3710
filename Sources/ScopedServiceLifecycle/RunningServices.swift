import Logging
import Scoped
import ServiceLifecycle
import Synchronization

/// The app services of one or more roots that are swift-service-lifecycle `Service`s, each
/// running from the moment a root builds it until the root that owns it last closes it, or
/// ``stop()``.
///
/// Each service's `run()` starts in an immediate task inside the build that produced it, so it
/// has begun before the code that asked for the service goes on: postgres-nio's client, for
/// one, is running before the first connection is leased from it, and never warns that it is
/// not. A service carried over by a reload keeps running: the root it was handed to closes it.
final class RunningServices: Sendable {
    private struct Running {
        /// The service's identity, when it is a class: what its close is matched by.
        let id: ObjectIdentifier?
        let task: Task<Void, Never>
    }

    private struct State {
        var running: [Running] = []
        /// Services whose root closed them: cancelled, and awaited by ``stop()``.
        var stopping: [Task<Void, Never>] = []
        var stopped = false
    }

    private let state = Mutex(State())
    private let logger: Logger

    /// Runs no service until ``watch(_:)`` is given a root.
    init(logger: Logger) {
        self.logger = logger
    }

    /// Starts every `Service` that `root` has built and every one it builds from now on.
    convenience init(root: ScopeRoot, logger: Logger) {
        self.init(logger: logger)
        watch(root)
    }

    /// Starts every `Service` that `root` has built and every one it builds from now on, and
    /// stops each when `root` closes it.
    func watch(_ root: ScopeRoot) {
        let built = root.watchAppServices { [weak self] value in
            if let service = value as? any Service { self?.start(service) }
        } closed: { [weak self] value in
            self?.stopRunning(value)
        }
        for case let service as any Service in built { start(service) }
    }

    private static func identity(of value: Any) -> ObjectIdentifier? {
        type(of: value) is AnyClass ? ObjectIdentifier(value as AnyObject) : nil
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
            if !state.stopped { state.running.append(Running(id: Self.identity(of: service), task: task)) }
            return !state.stopped
        }
        // Built while the services were stopping: it must not outlive them.
        if !kept { task.cancel() }
    }

    /// Cancels the run of `value`, which its root has closed.
    private func stopRunning(_ value: any Sendable) {
        guard let id = Self.identity(of: value) else { return }
        let task = state.withLock { state -> Task<Void, Never>? in
            guard let index = state.running.firstIndex(where: { $0.id == id }) else { return nil }
            let task = state.running.remove(at: index).task
            state.stopping.append(task)
            return task
        }
        task?.cancel()
    }

    /// Cancels every running service and waits until each `run()` has returned.
    func stop() async {
        let tasks = state.withLock { state in
            state.stopped = true
            return state.running.map(\.task) + state.stopping
        }
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
    }
}
