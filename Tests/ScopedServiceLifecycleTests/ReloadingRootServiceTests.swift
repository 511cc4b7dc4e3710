import Logging
import Scoped
import ScopedReload
import ScopedServiceLifecycle
import ScopedTestSupport
import ServiceLifecycle
import Synchronization
import Testing

/// A pool that runs as a `Service`, as postgres-nio's client does: a class, whose run the root
/// that owns it last stops by closing it.
final class NamedPool: Service, Sendable {
    let name: String
    let journal: ServiceJournal

    init(name: String, journal: ServiceJournal) {
        self.name = name
        self.journal = journal
    }

    func run() async throws {
        journal.record("run \(name)")
        try? await Task.sleep(for: .seconds(3600))
        journal.record("stopped \(name)")
    }
}

extension ScopedValues {
    @Entry var poolName: String = "a"
}

enum NamedPoolKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.app
    static func makeValue() async throws -> NamedPool {
        NamedPool(name: ScopedValues.current.poolName, journal: ScopedValues.current.serviceJournal)
    }
    static func close(_ pool: NamedPool, outcome: ScopeOutcome) async throws {
        pool.journal.record("closed \(pool.name)")
    }
}

/// A root service that follows configuration snapshots: each generation's running services run
/// from their build until the root that owns them last closes them.
struct ReloadingRootServiceTests {
    @Test func aCarriedOverPoolKeepsRunningAndAReplacedOneStopsOnceItsRootDrained() async throws {
        let journal = ServiceJournal()
        func makeRoot(_ name: String) -> ScopeRoot {
            ScopeRoot(startingFrom: ScopedValues(), services: [NamedPoolKey.self], observers: [ReloadRecorder()]) {
                $0.serviceJournal = journal
                $0.poolName = name
            }
        }
        let logger = Logger(label: "test")
        let rootService = ScopeRootService(root: ReloadableScopeRoot(makeRoot("a")), logger: logger)
        let group = ServiceGroup(services: [rootService], logger: logger)
        let running = Task { try await group.run() }
        try await rootService.ready()
        #expect(await eventually(within: .seconds(5)) { journal.all == ["run a"] })

        let (snapshots, continuation) = AsyncStream.makeStream(of: String.self)
        let outcomes = Mutex<[String]>([])
        let following = Task {
            try await rootService.follow(snapshots, makeRoot: makeRoot) { outcome in
                let line = (try? outcome.get().summary) ?? "rejected"
                outcomes.withLock { $0.append(line) }
            }
        }
        // A request that began on generation 1 holds pool a until it ends.
        let inFlight = rootService.root.openScope()
        continuation.yield("a")
        #expect(await eventually(within: .seconds(5)) { outcomes.withLock { $0.count } == 1 })
        #expect(outcomes.withLock { $0 } == ["carried over: namedPool"])
        #expect(journal.all == ["run a"], "a carried-over pool was started again or stopped")

        continuation.yield("b")
        #expect(await eventually(within: .seconds(5)) { journal.all == ["run a", "run b"] })
        try await Task.sleep(for: .milliseconds(100))
        #expect(journal.all == ["run a", "run b"], "pool a stopped while a request of its root was open")
        try await inFlight.close(.success)
        #expect(await eventually(within: .seconds(5)) { journal.all.count == 4 })
        #expect(journal.all == ["run a", "run b", "closed a", "stopped a"])

        continuation.finish()
        try await following.value
        await group.triggerGracefulShutdown()
        try await running.value
        #expect(journal.all == ["run a", "run b", "closed a", "stopped a", "closed b", "stopped b"])
    }
}
