@testable import Scoped
import ScopedReload
import ScopedDiagnostics
import Synchronization
import Testing

// Reloading a root: app services whose inputs did not change are carried over as the same
// instance, the others are rebuilt, a root that fails validation is rejected without touching
// the current one, and each service is closed exactly once, by the root that owns it last.

/// The settings a reload changes.
private struct PoolSettings: Sendable, Hashable {
    var size: Int
    var path: String
}

extension ScopedValues {
    @Entry fileprivate var poolSettings: PoolSettings = PoolSettings(size: 4, path: "a.db")
    @Entry fileprivate var reloadLogLevel: String = "info"
    @Entry fileprivate var poolFailsToOpen: Bool = false
}

/// Counts what the reload tests' services did.
private final class ServiceLedger: Sendable {
    private let events = Mutex<[String]>([])
    func record(_ event: String) { events.withLock { $0.append(event) } }
    var all: [String] { events.withLock { $0 } }
    func count(_ event: String) -> Int { all.filter { $0 == event }.count }
}

private final class Pool: Sendable {
    let settings: PoolSettings
    let ledger: ServiceLedger
    init(settings: PoolSettings, ledger: ServiceLedger) {
        self.settings = settings
        self.ledger = ledger
    }
}

private struct PoolOpenFailure: Error {}

extension ScopedValues {
    @Entry fileprivate var ledger: ServiceLedger = ServiceLedger()
}

/// An app service that reads the pool's settings.
private enum PoolKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.app
    static func makeValue() async throws -> Pool {
        let values = ScopedValues.current
        if values.poolFailsToOpen { throw PoolOpenFailure() }
        values.ledger.record("pool \(values.poolSettings.size) built")
        return Pool(settings: values.poolSettings, ledger: values.ledger)
    }
    static func close(_ pool: Pool, outcome: ScopeOutcome) async throws {
        pool.ledger.record("pool \(pool.settings.size) closed")
    }
}

/// An app service that reads the pool and nothing else.
private enum RepositoryKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.app
    static func makeValue() async throws -> Pool { try await ScopedValues.current.service(PoolKey.self) }
    static func close(_ pool: Pool, outcome: ScopeOutcome) async throws {
        pool.ledger.record("repository over pool \(pool.settings.size) closed")
    }
}

/// An app service that reads only the log level.
private enum LogSinkKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.app
    static func makeValue() async throws -> String { "sink at \(ScopedValues.current.reloadLogLevel)" }
    static func close(_ sink: String, outcome: ScopeOutcome) async throws {
        ScopedValues.current.ledger.record("\(sink) closed")
    }
}

struct RootReloadTests {
    private let ledger = ServiceLedger()

    private func makeRoot(
        size: Int = 4,
        path: String = "a.db",
        logLevel: String = "info",
        failing: Bool = false
    ) -> ScopeRoot {
        ScopeRoot(
            startingFrom: ScopedValues(),
            services: [PoolKey.self, RepositoryKey.self, LogSinkKey.self],
            observers: [DependencyGraphRecorder(), ReloadRecorder()]
        ) { [ledger] in
            $0.ledger = ledger
            $0.poolSettings = PoolSettings(size: size, path: path)
            $0.reloadLogLevel = logLevel
            $0.poolFailsToOpen = failing
        }
    }

    private func started() async throws -> ReloadableScopeRoot {
        let root = makeRoot()
        #expect(await root.validate().isEmpty)
        return ReloadableScopeRoot(root)
    }

    @Test func aServiceWhoseInputsDidNotChangeIsCarriedOverAsTheSameInstance() async throws {
        let reloadable = try await started()
        let before = try await reloadable.withScope { try await ScopedValues.current.service(PoolKey.self) }

        let reload = try await reloadable.reload(to: makeRoot(logLevel: "debug"))

        #expect(reload.generation == 2 && reloadable.generation == 2)
        #expect(reload.carriedOver == ["pool", "repository"])
        #expect(reload.rebuilt == [.init(service: "logSink", reason: "reloadLogLevel changed")])
        let after = try await reloadable.withScope { try await ScopedValues.current.service(PoolKey.self) }
        #expect(after === before)
        #expect(
            try await reloadable.withScope { try await ScopedValues.current.service(LogSinkKey.self) }
                == "sink at debug"
        )
        await reload.previous.shutdown()
        #expect(ledger.count("pool 4 closed") == 0, "the previous root closed a service it handed over")
        await reloadable.current.shutdown()
        #expect(
            ledger.all == [
                "pool 4 built", "sink at info closed",
                "sink at debug closed", "repository over pool 4 closed", "pool 4 closed",
            ]
        )
    }

    @Test func aChangedServiceIsRebuiltAndSoIsWhatReadIt() async throws {
        let reloadable = try await started()
        // A request that started before the reload keeps its root, and the old pool, to its end.
        let inFlight = reloadable.current.openScope()
        let reload = try await reloadable.reload(to: makeRoot(size: 8))

        #expect(reload.carriedOver == ["logSink"])
        #expect(
            reload.rebuilt == [
                .init(service: "pool", reason: "poolSettings.size changed"),
                .init(service: "repository", reason: "pool was rebuilt"),
            ]
        )
        #expect(reload.summary.hasPrefix("rebuilt: pool (poolSettings.size changed), repository (pool was rebuilt)"))
        let old = try await inFlight.run { try await ScopedValues.current.service(RepositoryKey.self) }
        #expect(old.settings.size == 4)
        #expect(
            try await reloadable.withScope { try await ScopedValues.current.service(RepositoryKey.self) }.settings.size
                == 8
        )

        let retired = Task { await reload.previous.shutdown() }
        try await Task.sleep(for: .milliseconds(50))
        #expect(ledger.count("pool 4 closed") == 0, "the old pool closed while a request still used it")
        try await inFlight.close(.success)
        await retired.value
        #expect(ledger.count("pool 4 closed") == 1)
        #expect(ledger.count("repository over pool 4 closed") == 1)
        await reloadable.current.shutdown()
        #expect(ledger.count("pool 8 closed") == 1)
    }

    @Test func aServiceCarriedOverTwiceClosesOnlyOnceTheFirstRootsRequestsEnded() async throws {
        let reloadable = try await started()
        let inFlight = reloadable.current.openScope()
        let carried = try await reloadable.reload(to: makeRoot(logLevel: "debug"))
        let firstRetired = Task { await carried.previous.shutdown() }  // waits for its request
        let replaced = try await reloadable.reload(to: makeRoot(size: 8, logLevel: "debug"))
        #expect(replaced.rebuilt.map(\.service) == ["pool", "repository"])

        // Generation 2 owns pool 4 now, and has no request of its own; generation 1's request
        // still uses it.
        let retired = Task { await replaced.previous.shutdown() }
        try await Task.sleep(for: .milliseconds(50))
        #expect(ledger.count("pool 4 closed") == 0, "pool 4 closed under a request of the first root")
        #expect(try await inFlight.run { try await ScopedValues.current.service(PoolKey.self) }.settings.size == 4)
        try await inFlight.close(.success)
        await firstRetired.value
        await retired.value
        #expect(ledger.count("pool 4 closed") == 1)
        await reloadable.current.shutdown()
    }

    @Test func aRootThatFailsValidationIsRejectedAndTheCurrentOneKeepsEverything() async throws {
        let reloadable = try await started()
        let current = reloadable.current
        let pool = try await reloadable.withScope { try await ScopedValues.current.service(PoolKey.self) }

        // The log sink is carried over, the pool fails to open.
        await #expect(throws: ScopeReloadError.self) {
            try await reloadable.reload(to: makeRoot(size: 8, failing: true))
        }

        #expect(reloadable.current === current && reloadable.generation == 1)
        #expect(try await reloadable.withScope { try await ScopedValues.current.service(PoolKey.self) } === pool)
        #expect(!ledger.all.contains { $0.hasSuffix("closed") }, "a rejected reload closed \(ledger.all)")
        await current.shutdown()
        #expect(ledger.count("pool 4 closed") == 1)
    }

    @Test func theGraphListsWhatEachAppServiceReadWhileBuilt() async throws {
        let reloadable = try await started()
        let services = try #require(reloadable.current.dependencyGraph()).services
        #expect(services.first { $0.name == "pool" }?.inputs == ["poolFailsToOpen", "ledger", "poolSettings"])
        #expect(services.first { $0.name == "logSink" }?.inputs == ["reloadLogLevel"])
        // The repository read only a service: that is an edge, not an input.
        #expect(services.first { $0.name == "repository" }?.inputs == [])
        await reloadable.current.shutdown()
    }

    @Test func theNewRootsGraphKnowsWhatTheCarriedOverServicesRead() async throws {
        let reloadable = try await started()
        let reload = try await reloadable.reload(to: makeRoot(logLevel: "debug"))
        #expect(reload.carriedOver == ["pool", "repository"])
        let graph = try #require(reloadable.current.dependencyGraph())
        // Carried over, not built here: what they read is known, their build time is not.
        #expect(graph.edges == [DependencyGraph.Edge(from: "repository", to: "pool")])
        #expect(graph.services.first { $0.name == "pool" }?.inputs == ["poolFailsToOpen", "ledger", "poolSettings"])
        #expect(graph.appServiceBuilds.map(\.name) == ["logSink"])
        await reload.previous.shutdown()
        await reloadable.current.shutdown()
    }

    @Test func theFieldThatChangedIsNamed() async throws {
        // The same settings but for the path: the reason names the path.
        let reloadable = try await started()
        let reload = try await reloadable.reload(to: makeRoot(path: "b.db"))
        #expect(reload.rebuilt.first == .init(service: "pool", reason: "poolSettings.path changed"))
        await reload.previous.shutdown()
        await reloadable.current.shutdown()
    }

    @Test func followTurnsSnapshotsIntoGenerations() async throws {
        let reloadable = try await started()
        let (snapshots, continuation) = AsyncStream.makeStream(of: Int.self)
        struct InvalidSize: Error {}
        let outcomes = Mutex<[String]>([])
        let following = Task {
            try await reloadable.follow(
                snapshots,
                makeRoot: { size in
                    guard size > 0 else { throw InvalidSize() }
                    return makeRoot(size: size, failing: size == 13)
                },
                shutdownTimeout: .seconds(5)
            ) { outcome in
                let line =
                    switch outcome {
                    case .success(let reload): "applied \(reload.generation)"
                    case .failure(let error as ScopeReloadError): "rejected: \(error)".prefix(40).description
                    case .failure(let error): "rejected: \(type(of: error))"
                    }
                outcomes.withLock { $0.append(line) }
            }
        }
        for size in [8, -1, 13, 16] { continuation.yield(size) }
        continuation.finish()
        try await following.value

        #expect(
            outcomes.withLock { $0 } == [
                "applied 2", "rejected: InvalidSize", "rejected: the new root failed validation",
                "applied 3",
            ]
        )
        #expect(reloadable.generation == 3)
        // Every retired root has shut down: each pool but the current one closed once.
        #expect(ledger.count("pool 4 closed") == 1 && ledger.count("pool 8 closed") == 1)
        #expect(ledger.count("pool 16 closed") == 0)
        await reloadable.current.shutdown()
        #expect(ledger.count("pool 16 closed") == 1)
    }
}
