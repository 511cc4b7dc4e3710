import ScopedTestSupport
@testable import Scoped
import Synchronization

/// Records what services were built and closed, and how, for one test's root.
final class LifetimeProbe: Sendable {
    private struct State {
        var events: [String] = []
        var builds: [String: Int] = [:]
        var open = 0
    }

    private let state = Mutex(State())

    func built(_ name: String) {
        state.withLock {
            $0.events.append("build \(name)")
            $0.builds[name, default: 0] += 1
            $0.open += 1
        }
    }

    func closed(_ name: String, _ outcome: ScopeOutcome) {
        let outcomeName =
            switch outcome {
            case .success: "success"
            case .failure: "failure"
            case .cancelled: "cancelled"
            }
        state.withLock {
            $0.events.append("close \(name) \(outcomeName)")
            $0.open -= 1
        }
    }

    var events: [String] { state.withLock { $0.events } }
    var openCount: Int { state.withLock { $0.open } }
    func builds(of name: String) -> Int { state.withLock { $0.builds[name] ?? 0 } }
}

extension ScopedValues {
    @Entry var probe: LifetimeProbe? = nil
    @Entry var serviceLabel: String = "default label"
    @Entry var barrier: Barrier? = nil
    /// How many readers `BrokenKey`'s construction waits for before it fails.
    @Entry var expectedWaiters: Int? = nil
}

/// Holds every party until all have arrived, so that constructions overlap for certain; once
/// open, it stays open.
final class Barrier: Sendable {
    private let state: Mutex<(remaining: Int, waiters: [CheckedContinuation<Void, Never>])>

    init(parties: Int) { state = Mutex((parties, [])) }

    func arrive() async {
        await withCheckedContinuation { continuation in
            let released = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.remaining -= 1
                guard state.remaining <= 0 else {
                    state.waiters.append(continuation)
                    return []
                }
                defer { state.waiters = [] }
                return state.waiters + [continuation]
            }
            for waiter in released { waiter.resume() }
        }
    }
}

/// A built service: records its name and the label it saw when built.
final class Resource: Sendable {
    let name: String
    let label: String
    init(name: String, label: String) {
        self.name = name
        self.label = label
    }
}

struct CloseFailure: Error, Equatable {
    let name: String
}

/// The keys below share their build and close through this helper.
protocol ProbedResourceKey: ScopedServiceKey where Value == Resource {}

extension ProbedResourceKey {
    static func makeValue() async throws -> Resource {
        let values = ScopedValues.current
        values.probe?.built(name)
        return Resource(name: name, label: values.serviceLabel)
    }

    static func close(_ value: Resource, outcome: ScopeOutcome) async throws {
        ScopedValues.current.probe?.closed(name, outcome)
    }
}

enum AppClockKey: ProbedResourceKey {
    static let lifetime = ScopedLifetime.app
}

enum SlowAppKey: ProbedResourceKey {
    static let lifetime = ScopedLifetime.app
    static func makeValue() async throws -> Resource {
        ScopedValues.current.probe?.built(name)
        try await Task.sleep(for: .milliseconds(20))
        return Resource(name: name, label: ScopedValues.current.serviceLabel)
    }
}

enum SessionKey: ProbedResourceKey {
    static let lifetime = ScopedLifetime.scope
}

enum FirstResourceKey: ProbedResourceKey {
    static let lifetime = ScopedLifetime.scope
}

/// Needs the first resource, so it finishes building after it and must close before it.
enum SecondResourceKey: ProbedResourceKey {
    static let lifetime = ScopedLifetime.scope
    static func makeValue() async throws -> Resource {
        _ = try await ScopedValues.current.service(FirstResourceKey.self)
        ScopedValues.current.probe?.built(name)
        return Resource(name: name, label: ScopedValues.current.serviceLabel)
    }
}

enum FailingCloseKey: ProbedResourceKey {
    static let lifetime = ScopedLifetime.scope
    static func close(_ value: Resource, outcome: ScopeOutcome) async throws {
        ScopedValues.current.probe?.closed(name, outcome)
        throw CloseFailure(name: name)
    }
}

enum CaptiveRepositoryKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.app
    static func makeValue() async throws -> Resource {
        try await ScopedValues.current.service(SessionKey.self)
    }
}

enum CycleAKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.app
    static func makeValue() async throws -> Resource { try await ScopedValues.current.service(CycleBKey.self) }
}

enum CycleBKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.app
    static func makeValue() async throws -> Resource { try await ScopedValues.current.service(CycleAKey.self) }
}

/// Three request services in a ring, so that the cycle is found two constructions deep.
enum RingFirstKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.scope
    static func makeValue() async throws -> Resource { try await ScopedValues.current.service(RingSecondKey.self) }
}

enum RingSecondKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.scope
    static func makeValue() async throws -> Resource { try await ScopedValues.current.service(RingThirdKey.self) }
}

enum RingThirdKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.scope
    static func makeValue() async throws -> Resource { try await ScopedValues.current.service(RingFirstKey.self) }
}

/// Two app services that need each other, built from two tasks at once: each task builds one
/// and then waits for the other's.
enum CrossTaskCycleAKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.app
    static func makeValue() async throws -> Resource {
        await ScopedValues.current.barrier?.arrive()
        return try await ScopedValues.current.service(CrossTaskCycleBKey.self)
    }
}

enum CrossTaskCycleBKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.app
    static func makeValue() async throws -> Resource {
        await ScopedValues.current.barrier?.arrive()
        return try await ScopedValues.current.service(CrossTaskCycleAKey.self)
    }
}

/// Two app services built at once that both need a third: waiting, but no cycle.
enum DiamondLeftKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.app
    static func makeValue() async throws -> Resource {
        await ScopedValues.current.barrier?.arrive()
        return try await ScopedValues.current.service(DiamondSharedKey.self)
    }
}

enum DiamondRightKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.app
    static func makeValue() async throws -> Resource {
        await ScopedValues.current.barrier?.arrive()
        return try await ScopedValues.current.service(DiamondSharedKey.self)
    }
}

enum DiamondSharedKey: ProbedResourceKey {
    static let lifetime = ScopedLifetime.app
}

struct ConstructionFailure: Error {}

enum BrokenKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.scope
    static func makeValue() async throws -> Resource {
        let values = ScopedValues.current
        values.probe?.built(name)
        // The first construction fails only once `expectedWaiters` other readers wait for it,
        // so that every concurrent reader provably shares it.
        if let expected = values.expectedWaiters, let scope = values.scope, values.probe?.builds(of: name) == 1 {
            let deadline = ContinuousClock.now + .seconds(10)
            while scope.waiterCount(for: ObjectIdentifier(Self.self)) < expected, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(1))
            }
        }
        throw ConstructionFailure()
    }
}

extension ScopedValues {
    /// Holds `LateResourceKey`'s construction: it fires `started`, then waits for `release`.
    @Entry var constructionGate: (started: Signal, release: Signal)? = nil
}

/// A scope service whose construction can be held until its scope has closed, and whose close
/// throws.
enum LateResourceKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.scope
    static func makeValue() async throws -> Resource {
        if let gate = ScopedValues.current.constructionGate {
            gate.started.fire()
            await gate.release.wait()
        }
        return Resource(name: name, label: "late")
    }
    static func close(_ value: Resource, outcome: ScopeOutcome) async throws {
        ScopedValues.current.probe?.closed(name, outcome)
        throw CloseFailure(name: name)
    }
}

/// A root whose services record their builds and closes in the returned probe.
func makeRoot(
    services: [any ScopedServiceKey.Type] = [],
    requirements: [any Sendable.Type] = [],
    onCloseError: (@Sendable (ScopeCloseError) -> Void)? = nil
) -> (ScopeRoot, LifetimeProbe) {
    let probe = LifetimeProbe()
    let root = ScopeRoot(services: services, requirements: requirements, onCloseError: onCloseError) {
        $0.probe = probe
        $0.serviceLabel = "root"
    }
    return (root, probe)
}
