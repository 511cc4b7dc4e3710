import Dependencies
import Scoped
import Swinject

// MARK: - The service every workload reads

protocol BenchRepository: Sendable {
    func count() -> Int
}

/// Written by every `count()`, so the optimizer can neither drop nor hoist the calls.
nonisolated(unsafe) var benchCalls = 0

final class LiveBenchRepository: BenchRepository {
    @inline(never)
    func count() -> Int {
        benchCalls &+= 1
        return 1
    }
}

final class MockBenchRepository: BenchRepository {
    @inline(never)
    func count() -> Int {
        benchCalls &+= 1
        return 2
    }
}

// MARK: - Hand-wired and raw task-local

struct HandWiredDependencies {
    let repository: any BenchRepository
}

@inline(never)
func handWiredCount(_ dependencies: HandWiredDependencies) -> Int { dependencies.repository.count() }

enum RawTaskLocal {
    @TaskLocal static var repository: any BenchRepository = LiveBenchRepository()
    @TaskLocal static var unrelated = 0
}

@inline(never)
func rawTaskLocalCount() -> Int { RawTaskLocal.repository.count() }

/// Pushes `depth` bindings of an unrelated task-local, then runs `body`.
func withUnrelatedBindings(_ depth: Int, _ body: () -> Int) -> Int {
    if depth == 0 { return body() }
    return RawTaskLocal.$unrelated.withValue(depth) { withUnrelatedBindings(depth - 1, body) }
}

// MARK: - Scoped

extension ScopedValues {
    @Entry var benchRepository: any BenchRepository = LiveBenchRepository()
    @Entry var benchRequestID: String? = nil
    @Entry var benchArray: [Int] = []
    @Entry var benchContributions: Contributions<Int> = Contributions()
}

struct ScopedController: Sendable {
    @Scoped(\.benchRepository) var repository

    @inline(never)
    func count() -> Int { repository.count() }
}

/// Opens `depth` nested scopes, each overriding a different entry, then runs `body`.
func withNestedScopes(_ depth: Int, _ body: () -> Int) -> Int {
    if depth == 0 { return body() }
    return withScopedValues({ overrideOne(&$0, depth - 1) }) { withNestedScopes(depth - 1, body) }
}

// MARK: - swift-dependencies

private enum BenchRepositoryKey: DependencyKey {
    static let liveValue: any BenchRepository = LiveBenchRepository()
}

private enum BenchRequestIDKey: DependencyKey {
    static let liveValue: String? = nil
}

extension DependencyValues {
    var benchRepository: any BenchRepository {
        get { self[BenchRepositoryKey.self] }
        set { self[BenchRepositoryKey.self] = newValue }
    }
    var benchRequestID: String? {
        get { self[BenchRequestIDKey.self] }
        set { self[BenchRequestIDKey.self] = newValue }
    }
}

struct DependenciesController {
    @Dependency(\.benchRepository) var repository

    @inline(never)
    func count() -> Int { repository.count() }
}

func withNestedDependencies(_ depth: Int, _ body: () -> Int) -> Int {
    if depth == 0 { return body() }
    return withDependencies({ overrideOne(&$0, depth - 1) }) { withNestedDependencies(depth - 1, body) }
}

// MARK: - Swinject

func makeSwinjectRoot() -> Container {
    let container = Container()
    container.register((any BenchRepository).self) { _ in LiveBenchRepository() }.inObjectScope(.container)
    return container
}

@inline(never)
func swinjectCount(_ container: Container) -> Int { container.resolve((any BenchRepository).self)!.count() }

// MARK: - The core workloads

func coreWorkloads() -> [Workload] {
    let handWired = HandWiredDependencies(repository: LiveBenchRepository())
    let scoped = ScopedController()
    let dependencies = DependenciesController()
    let swinjectRoot = makeSwinjectRoot()
    var swinjectLeaf = swinjectRoot
    for _ in 0..<64 { swinjectLeaf = Container(parent: swinjectLeaf) }
    let deepSwinjectLeaf = swinjectLeaf

    func loop(_ n: Int, _ body: () -> Int) -> Int {
        var sum = 0
        for _ in 0..<n { sum &+= body() }
        return sum
    }

    return [
        Workload(group: "read", name: "hand-wired: deps.repository.count(), deps passed as a parameter") { n in
            loop(n) { handWiredCount(handWired) }
        },
        Workload(group: "read", name: "raw @TaskLocal read + call") { n in
            loop(n) { rawTaskLocalCount() }
        },
        Workload(group: "read", name: "raw @TaskLocal read, 64 unrelated bindings pushed after it") { n in
            withUnrelatedBindings(64) { loop(n) { rawTaskLocalCount() } }
        },
        Workload(group: "read", name: "Scoped @Scoped read, no override") { n in
            loop(n) { scoped.count() }
        },
        Workload(group: "read", name: "Scoped ScopedValues.current.entry read, no override") { n in
            loop(n) { ScopedValues.current.benchRepository.count() }
        },
        // A list of 3 set in the scope, as an array and as contributions: the entry read, its
        // count taken (reading a contributed list costs what reading an array costs).
        Workload(group: "read", name: "Scoped array entry of 3 read") { n in
            withScopedValues({ $0.benchArray = [1, 2, 3] }) { loop(n) { ScopedValues.current.benchArray.count } }
        },
        Workload(group: "read", name: "Scoped Contributions entry of 3 read") { n in
            withScopedValues({
                for number in 1...3 { $0.contribute(number, to: \.benchContributions) }
            }) { loop(n) { ScopedValues.current.benchContributions.contributions.count } }
        },
        Workload(group: "read", name: "Scoped @Scoped read inside an override") { n in
            withScopedValues({ $0.benchRepository = MockBenchRepository() }) { loop(n) { scoped.count() } }
        },
        Workload(group: "read", name: "Scoped @Scoped read, 64 other entries overridden in the same scope") { n in
            withScopedValues({
                overrideAll(&$0)
                $0.benchRepository = MockBenchRepository()
            }) { loop(n) { scoped.count() } }
        },
        Workload(group: "read", name: "Scoped @Scoped read at nesting depth 64") { n in
            withScopedValues({ $0.benchRepository = MockBenchRepository() }) {
                withNestedScopes(64) { loop(n) { scoped.count() } }
            }
        },
        Workload(group: "read", name: "swift-dependencies @Dependency read, no override") { n in
            loop(n) { dependencies.count() }
        },
        Workload(group: "read", name: "swift-dependencies read inside withDependencies override") { n in
            withDependencies({ $0.benchRepository = MockBenchRepository() }) { loop(n) { dependencies.count() } }
        },
        Workload(group: "read", name: "swift-dependencies read, 64 other keys overridden in the same scope") { n in
            withDependencies({
                overrideAll(&$0)
                $0.benchRepository = MockBenchRepository()
            }) { loop(n) { dependencies.count() } }
        },
        Workload(group: "read", name: "swift-dependencies read inside 64 nested withDependencies") { n in
            withDependencies({ $0.benchRepository = MockBenchRepository() }) {
                withNestedDependencies(64) { loop(n) { dependencies.count() } }
            }
        },
        Workload(group: "read", name: "Swinject resolve, container scope") { n in
            loop(n) { swinjectCount(swinjectRoot) }
        },
        Workload(group: "read", name: "Swinject resolve at the leaf of a 64-deep child-container chain") { n in
            loop(n) { swinjectCount(deepSwinjectLeaf) }
        },
        Workload(group: "per request", name: "raw @TaskLocal withValue + 1 read") { n in
            loop(n) { RawTaskLocal.$repository.withValue(MockBenchRepository()) { rawTaskLocalCount() } }
        },
        Workload(group: "per request", name: "Scoped withScopedValues: no override + 1 read") { n in
            loop(n) { withScopedValues({ _ in }) { scoped.count() } }
        },
        Workload(group: "per request", name: "Scoped withScopedValues: 2 overrides + 1 read") { n in
            loop(n) {
                withScopedValues({
                    $0.benchRepository = MockBenchRepository()
                    $0.benchRequestID = "request"
                }) { scoped.count() }
            }
        },
        Workload(group: "per request", name: "Scoped withScopedValues, async operation: 2 overrides + 1 read") { n in
            var sum = 0
            for _ in 0..<n {
                sum &+= await withScopedValues({
                    $0.benchRepository = MockBenchRepository()
                    $0.benchRequestID = "request"
                }) {
                    await Task.yield()
                    return scoped.count()
                }
            }
            return sum
        },
        Workload(group: "per request", name: "swift-dependencies withDependencies: 2 overrides + 1 read") { n in
            loop(n) {
                withDependencies({
                    $0.benchRepository = MockBenchRepository()
                    $0.benchRequestID = "request"
                }) { dependencies.count() }
            }
        },
        Workload(group: "per request", name: "Swinject Container(parent: root) + 1 resolve") { n in
            loop(n) { swinjectCount(Container(parent: swinjectRoot)) }
        },
    ]
}
