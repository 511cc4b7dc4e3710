import Dependencies
import Scoped
import ScopedReload
import Swinject

/// A per-request resource: built on first use in a scope and closed when the scope ends.
final class RequestResource: Sendable {
    func close() {}
}

enum RequestResourceKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.scope
    static func makeValue() async throws -> RequestResource { RequestResource() }
    static func close(_ value: RequestResource, outcome: ScopeOutcome) async throws { value.close() }
}

/// An application-wide service, built once per root: what a session's database is.
final class SharedPool: Sendable {}

enum SharedPoolKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.app
    static func makeValue() async throws -> SharedPool { SharedPool() }
}

/// A per-request resource that reads the app service while it is built, as a database session
/// reads its database.
final class PooledResource: Sendable {
    let pool: SharedPool
    init(pool: SharedPool) { self.pool = pool }
}

enum PooledResourceKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.scope
    static func makeValue() async throws -> PooledResource {
        PooledResource(pool: try await ScopedValues.current.service(SharedPoolKey.self))
    }
}

/// `n` requests on `root`, each a request scope building a `PooledResource` and reading an
/// entry: the shape of a request that uses its database session.
func pooledRequests(_ n: Int, on root: ScopeRoot, reading controller: ScopedController) async -> Int {
    var sum = 0
    for _ in 0..<n {
        sum &+=
            (try? await root.withScope({ $0.benchRequestID = "request" }) {
                _ = try await ScopedValues.current.service(PooledResourceKey.self)
                return controller.count()
            }) ?? 0
    }
    return sum
}

/// `n` raw task-local bindings, each with a read: nothing shared between tasks.
func rawTaskLocalRequests(_ n: Int) -> Int {
    var sum = 0
    for _ in 0..<n { sum &+= RawTaskLocal.$repository.withValue(MockBenchRepository()) { rawTaskLocalCount() } }
    return sum
}

/// Runs `body` for `n` operations split over two concurrent tasks; returns their sum.
func inTwoTasks(_ n: Int, _ body: @escaping @Sendable (Int) async -> Int) async -> Int {
    await withTaskGroup(of: Int.self) { group in
        for half in [n / 2, n - n / 2] { group.addTask { await body(half) } }
        return await group.reduce(0, &+)
    }
}

private enum RequestResourceDependencyKey: DependencyKey {
    static var liveValue: RequestResource { RequestResource() }
}

extension DependencyValues {
    var requestResource: RequestResource {
        get { self[RequestResourceDependencyKey.self] }
        set { self[RequestResourceDependencyKey.self] = newValue }
    }
}

/// `n` requests on `root`: each opens a request scope, sets 2 entries, builds 1 per-scope
/// resource, reads an entry with `controller`, and closes the scope (closing the resource).
func requests(_ n: Int, on root: ScopeRoot, reading controller: ScopedController) async -> Int {
    var sum = 0
    for _ in 0..<n {
        sum &+=
            (try? await root.withScope({
                $0.benchRepository = MockBenchRepository()
                $0.benchRequestID = "request"
            }) {
                _ = try await ScopedValues.current.service(RequestResourceKey.self)
                return controller.count()
            }) ?? 0
    }
    return sum
}

/// The same requests on a root that reloads: each reads the current root under its lock first.
func requests(_ n: Int, on reloadable: ReloadableScopeRoot, reading controller: ScopedController) async -> Int {
    var sum = 0
    for _ in 0..<n {
        sum &+=
            (try? await reloadable.withScope({
                $0.benchRepository = MockBenchRepository()
                $0.benchRequestID = "request"
            }) {
                _ = try await ScopedValues.current.service(RequestResourceKey.self)
                return controller.count()
            }) ?? 0
    }
    return sum
}

/// The per-request cost: open a request scope, set 2 entries, build 1 per-scope resource,
/// read an entry, close the scope (closing the resource).
func lifetimeWorkloads() -> [Workload] {
    let root = ScopeRoot { $0.benchRepository = LiveBenchRepository() }
    // Reloaded once: requests open on its second generation.
    let reloadable = ReloadableScopeRoot(ScopeRoot { $0.benchRepository = LiveBenchRepository() })
    reloadable.replace(with: ScopeRoot { $0.benchRepository = LiveBenchRepository() })
    let scoped = ScopedController()
    let swinjectRoot = makeSwinjectRoot()
    swinjectRoot.register(RequestResource.self) { _ in RequestResource() }.inObjectScope(.container)
    let dependencies = DependenciesController()
    let pooledRoot = ScopeRoot(services: [SharedPoolKey.self, PooledResourceKey.self]) {
        $0.benchRepository = LiveBenchRepository()
    }

    return [
        Workload(
            group: "request scope",
            name: "Scoped root.withScope: 1 scoped resource that reads an app service while built + 1 read"
        ) { n in await pooledRequests(n, on: pooledRoot, reading: scoped) },
        // Wall time per request with two requests at a time on two cores: what contention on
        // the root's shared state costs (ideally half the row above).
        Workload(
            group: "request scope",
            name: "the same, 2 tasks at once (wall time per request)"
        ) { n in await inTwoTasks(n) { await pooledRequests($0, on: pooledRoot, reading: scoped) } },
        // How far two tasks scale on this machine with nothing shared: the ceiling for the row above.
        Workload(group: "request scope", name: "baseline: raw @TaskLocal withValue + 1 read, 1 task") { n in
            rawTaskLocalRequests(n)
        },
        Workload(
            group: "request scope",
            name: "baseline: the same, 2 tasks at once (wall time per op)"
        ) { n in await inTwoTasks(n) { rawTaskLocalRequests($0) } },
        Workload(
            group: "request scope",
            name: "Scoped root.withScope: 2 overrides + 1 scoped resource built and closed + 1 read"
        ) { n in await requests(n, on: root, reading: scoped) },
        Workload(
            group: "request scope",
            name: "the same on a ReloadableScopeRoot, reloaded once"
        ) { n in await requests(n, on: reloadable, reading: scoped) },
        Workload(
            group: "request scope",
            name: "Swinject child container + 2 registrations + 1 resource resolved + 1 resolve"
        ) { n in
            var sum = 0
            for _ in 0..<n {
                let child = Container(parent: swinjectRoot)
                child.register((any BenchRepository).self) { _ in MockBenchRepository() }.inObjectScope(.container)
                child.register(String.self, name: "requestID") { _ in "request" }
                let resource = child.resolve(RequestResource.self)!
                resource.close()
                sum &+= swinjectCount(child)
            }
            return sum
        },
        Workload(group: "request scope", name: "swift-dependencies withDependencies: 2 overrides + 1 resource + 1 read")
        { n in
            var sum = 0
            for _ in 0..<n {
                sum &+= await withDependencies({
                    $0.benchRepository = MockBenchRepository()
                    $0.benchRequestID = "request"
                }) {
                    @Dependency(\.requestResource) var resource
                    resource.close()
                    return dependencies.count()
                }
            }
            return sum
        },
    ]
}
