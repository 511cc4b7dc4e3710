@testable import Scoped
import ScopedReload
import ScopedTenants
import ScopedTestSupport
import Synchronization
import Testing

/// A tenant's own store: built once per tenant, from the tenant's values.
final class TenantStore: Sendable {
    let tenant: TenantID?
    let label: String
    private let rows = Mutex<[String]>([])

    init(tenant: TenantID?, label: String) {
        self.tenant = tenant
        self.label = label
    }

    func insert(_ row: String) { rows.withLock { $0.append(row) } }
    var all: [String] { rows.withLock { $0 } }
}

extension ScopedValues {
    @Entry var tenantLabel: String = "no tenant"
    @Entry var failingTenants: Set<String> = []
}

enum TenantStoreKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.tenant
    static func makeValue() async throws -> TenantStore {
        let values = ScopedValues.current
        if let tenant = values.tenant, values.failingTenants.contains(tenant.rawValue) {
            throw ProbeFailure(message: "cannot open \(tenant)")
        }
        values.probe?.built("tenantStore \(values.tenant?.rawValue ?? "-")")
        return TenantStore(tenant: values.tenant, label: values.tenantLabel)
    }
    static func close(_ store: TenantStore, outcome: ScopeOutcome) async throws {
        ScopedValues.current.probe?.closed("tenantStore \(store.tenant?.rawValue ?? "-")", outcome)
    }
}

extension ScopedValues {
    @Entry var closeGate: Barrier? = nil
}

/// A tenant's store whose close waits at the gate: a file still being closed.
enum SlowClosingStoreKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.tenant
    static func makeValue() async throws -> TenantStore {
        ScopedValues.current.probe?.built("slowStore")
        return TenantStore(tenant: ScopedValues.current.tenant, label: "")
    }
    static func close(_ store: TenantStore, outcome: ScopeOutcome) async throws {
        await ScopedValues.current.closeGate?.arrive()
        ScopedValues.current.probe?.closed("slowStore", outcome)
    }
}

/// An app service that reads a tenant's store: a captive dependency.
enum AppReadsTenantKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.app
    static func makeValue() async throws -> TenantStore { try await ScopedValues.current.service(TenantStoreKey.self) }
}

/// A tenant service that reads a scope's session: a captive dependency.
enum TenantReadsScopeKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.tenant
    static func makeValue() async throws -> Resource { try await ScopedValues.current.service(SessionKey.self) }
}

struct ProbeFailure: Error, Equatable {
    let message: String
}

private func tenant(_ raw: String) -> TenantID { TenantID(raw)! }

private func makeTenantRoot(
    maximumOpen: Int? = nil,
    idleTimeout: Duration? = nil,
    failing: Set<String> = []
) -> (ScopeRoot, LifetimeProbe) {
    let probe = LifetimeProbe()
    let root = ScopeRoot(
        startingFrom: ScopedValues(),
        observers: [
            Tenancy(maximumOpen: maximumOpen, idleTimeout: idleTimeout) { id, values in
                guard id.rawValue != "unknown" else { throw ProbeFailure(message: "unknown tenant") }
                values.tenantLabel = "label of \(id)"
            }
        ]
    ) {
        $0.probe = probe
        $0.failingTenants = failing
    }
    return (root, probe)
}

struct TenantIDTests {
    @Test(arguments: ["a", "acme", "tenant-42", String(repeating: "z", count: 63), "0", "-"])
    func acceptsOneToSixtyThreeCharactersOfTheLabelAlphabet(_ raw: String) {
        #expect(TenantID(raw)?.rawValue == raw)
    }

    @Test(arguments: ["", "Acme", "a_b", "a.b", "../etc", "a b", String(repeating: "z", count: 64), "ü", "a/b"])
    func refusesAnythingElse(_ raw: String) {
        #expect(TenantID(raw) == nil)
    }
}

struct TenantTests {
    @Test func theABACSequenceSeesEachTenantsOwnStoreAndValues() async throws {
        let (root, probe) = makeTenantRoot()
        var stores: [String: ObjectIdentifier] = [:]
        for (step, raw) in ["a", "b", "a", "c"].enumerated() {
            try await root.withScope(tenant: tenant(raw)) {
                let values = ScopedValues.current
                #expect(values.tenant == tenant(raw))
                #expect(values.tenantLabel == "label of \(raw)")
                let store = try await values.service(TenantStoreKey.self)
                #expect(store.tenant == tenant(raw))
                #expect(store.label == "label of \(raw)")
                store.insert("\(raw) \(step)")
                #expect(store.all.allSatisfy { $0.hasPrefix("\(raw) ") })
                if let known = stores[raw] { #expect(known == ObjectIdentifier(store)) }
                stores[raw] = ObjectIdentifier(store)
            }
        }
        #expect(Set(stores.values).count == 3)
        #expect(probe.builds(of: "tenantStore a") == 1)
        #expect(root.tenantStatistics == TenantStatistics(open: 3, evicted: 0))
        await root.shutdown()
        #expect(probe.openCount == 0)
    }

    @Test func sixteenClientsAcrossFiftyTenantsNeverSeeAnotherTenantsRows() async throws {
        let (root, _) = makeTenantRoot(maximumOpen: 20, idleTimeout: .milliseconds(5))
        let crossed = Tally()
        let written = Tally()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for client in 0..<16 {
                group.addTask {
                    for request in 0..<200 {
                        let raw = "t\((client * 7 + request * 13) % 50)"
                        do {
                            try await root.withScope(tenant: tenant(raw)) {
                                // Nested scopes and child tasks keep the tenant.
                                try await withScope {
                                    async let store = ScopedValues.current.service(TenantStoreKey.self)
                                    let mine = try await store
                                    mine.insert(raw)
                                    await Task.yield()
                                    let foreign = mine.all.filter { $0 != raw }.count
                                    crossed.add(foreign + (ScopedValues.current.tenant == tenant(raw) ? 0 : 1))
                                    written.add(1)
                                }
                            }
                        } catch let error as TenantCapacityError {
                            let limit = error.limit
                            #expect(limit == 20)
                        }
                        #expect(root.tenantStatistics.open <= 20)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(crossed.value == 0)
        #expect(written.value > 1_000)
        await root.shutdown()
    }

    @Test func anIdleTenantIsEvictedAndItsServicesClosedButNeverWhileAScopeIsOpen() async throws {
        let (root, probe) = makeTenantRoot(idleTimeout: .milliseconds(50))
        let scope = try root.openScope(tenant: tenant("busy"))
        _ = try await scope.run { try await ScopedValues.current.service(TenantStoreKey.self) }
        try await root.withScope(tenant: tenant("idle")) {
            _ = try await ScopedValues.current.service(TenantStoreKey.self)
        }
        try await waitUntil { probe.events.contains("close tenantStore idle success") }
        #expect(root.tenantStatistics == TenantStatistics(open: 1, evicted: 1))
        try await Task.sleep(for: .milliseconds(200))
        #expect(!probe.events.contains("close tenantStore busy success"))
        try await scope.close(.success)
        try await waitUntil { probe.events.contains("close tenantStore busy success") }
        #expect(root.tenantStatistics == TenantStatistics(open: 0, evicted: 2))
        // Evicted tenants open again, with new services, on their next scope.
        try await root.withScope(tenant: tenant("idle")) {
            _ = try await ScopedValues.current.service(TenantStoreKey.self)
        }
        #expect(probe.builds(of: "tenantStore idle") == 2)
        await root.shutdown()
    }

    @Test func atTheBoundTheLeastRecentlyUsedIdleTenantGoesAndWhenAllAreBusyTheScopeIsRefused() async throws {
        let (root, probe) = makeTenantRoot(maximumOpen: 2)
        try await root.withScope(tenant: tenant("old")) {
            _ = try await ScopedValues.current.service(TenantStoreKey.self)
        }
        let busy = try root.openScope(tenant: tenant("busy"))
        _ = try await busy.run { try await ScopedValues.current.service(TenantStoreKey.self) }
        try await root.withScope(tenant: tenant("new")) {
            _ = try await ScopedValues.current.service(TenantStoreKey.self)
        }
        try await waitUntil { probe.events.contains("close tenantStore old success") }
        #expect(root.tenantStatistics == TenantStatistics(open: 2, evicted: 1))
        // `new` is idle now, `busy` is not: a third tenant evicts `new`.
        let second = try root.openScope(tenant: tenant("third"))
        #expect(root.tenantStatistics == TenantStatistics(open: 2, evicted: 2))
        // Both open tenants have a scope open: no room.
        #expect(throws: TenantCapacityError(limit: 2)) {
            try root.openScope(tenant: tenant("fourth"))
        }
        var ran = false
        await #expect(throws: TenantCapacityError(limit: 2)) {
            try await root.withScope(tenant: tenant("fourth")) { ran = true }
        }
        #expect(!ran)
        #expect(root.tenantStatistics.open == 2)
        try await busy.close(.success)
        try await second.close(.success)
        try await root.withScope(tenant: tenant("fourth")) {}
        await root.shutdown()
        #expect(probe.openCount == 0)
    }

    @Test func aTenantWhoseServiceCannotBeBuiltFailsAloneAndIsRetriedOnItsNextScope() async throws {
        let probe = LifetimeProbe()
        let failing = Mutex<Set<String>>(["broken"])
        let root = ScopeRoot(
            startingFrom: ScopedValues(),
            observers: [
                Tenancy { _, values in values.failingTenants = failing.withLock { $0 } }
            ]
        ) { $0.probe = probe }
        do {
            try await root.withScope(tenant: tenant("broken")) {
                _ = try await ScopedValues.current.service(TenantStoreKey.self)
            }
            Issue.record("the broken tenant's store was built")
        } catch let error as TenantUnavailableError {
            #expect(error.tenant == tenant("broken"))
            #expect(error.entry == "tenantStore")
            #expect(error.underlying as? ProbeFailure == ProbeFailure(message: "cannot open broken"))
        }
        let other = try await root.withScope(tenant: tenant("fine")) {
            try await ScopedValues.current.service(TenantStoreKey.self)
        }
        #expect(other.tenant == tenant("fine"))
        // Fixed: the tenant's values are set when it opens, and the failed tenant is still open.
        failing.withLock { $0 = [] }
        await #expect(throws: TenantUnavailableError.self) {
            try await root.withScope(tenant: tenant("broken")) {
                _ = try await ScopedValues.current.service(TenantStoreKey.self)
            }
        }
        // A failing store is not kept: evicted and reopened, the tenant builds it again.
        let evictingRoot = ScopeRoot(
            startingFrom: ScopedValues(),
            observers: [
                Tenancy(idleTimeout: .milliseconds(1)) { _, values in
                    values.failingTenants = failing.withLock { $0 }
                }
            ]
        ) { $0.probe = probe }
        failing.withLock { $0 = ["broken"] }
        await #expect(throws: TenantUnavailableError.self) {
            try await evictingRoot.withScope(tenant: tenant("broken")) {
                _ = try await ScopedValues.current.service(TenantStoreKey.self)
            }
        }
        failing.withLock { $0 = [] }
        try await waitUntil { evictingRoot.tenantStatistics.evicted == 1 }
        let retried = try await evictingRoot.withScope(tenant: tenant("broken")) {
            try await ScopedValues.current.service(TenantStoreKey.self)
        }
        #expect(retried.tenant == tenant("broken"))
        await root.shutdown()
        await evictingRoot.shutdown()
    }

    @Test func tenantServicesAreRefusedOutsideATenantAndAsCaptivesOfLongerLifetimes() async throws {
        let (root, _) = makeTenantRoot()
        await #expect(throws: ScopedError.outsideTenant(entry: "tenantStore")) {
            try await root.withScope { _ = try await ScopedValues.current.service(TenantStoreKey.self) }
        }
        await #expect(throws: ScopedError.captiveDependency(chain: ["appReadsTenant (app)", "tenantStore (tenant)"])) {
            try await root.withScope(tenant: tenant("a")) {
                _ = try await ScopedValues.current.service(AppReadsTenantKey.self)
            }
        }
        await #expect(throws: ScopedError.captiveDependency(chain: ["tenantReadsScope (tenant)", "session (scope)"])) {
            try await root.withScope(tenant: tenant("a")) {
                _ = try await ScopedValues.current.service(TenantReadsScopeKey.self)
            }
        }
        await root.shutdown()
    }

    @Test func aTenantThatConfigurationRefusesDoesNotOpen() async throws {
        let (root, _) = makeTenantRoot()
        await #expect(throws: ProbeFailure(message: "unknown tenant")) {
            try await root.withScope(tenant: tenant("unknown")) {}
        }
        #expect(root.tenantStatistics == TenantStatistics(open: 0, evicted: 0))
        #expect(root.openScopeCount == 0)
    }

    @Test func handedOffWorkKeepsItsTenantAndKeepsItOpen() async throws {
        let (root, probe) = makeTenantRoot(idleTimeout: .milliseconds(20))
        let release = AsyncStream<Void>.makeStream()
        let seen = Mutex<(TenantID?, TenantID?)>((nil, nil))
        let task = try await root.withScope(tenant: tenant("acme")) {
            handOff(timeout: .seconds(10)) {
                for await _ in release.stream { break }
                let store = try await ScopedValues.current.service(TenantStoreKey.self)
                seen.withLock { $0 = (ScopedValues.current.tenant, store.tenant) }
            }
        }
        // The request has ended; the handed-off work holds the tenant open past its idle timeout.
        try await Task.sleep(for: .milliseconds(100))
        #expect(root.tenantStatistics == TenantStatistics(open: 1, evicted: 0))
        release.continuation.yield()
        try await task.value
        #expect(seen.withLock { $0 } == (tenant("acme"), tenant("acme")))
        try await waitUntil { probe.events.contains("close tenantStore acme success") }
        await root.shutdown()
    }

    @Test func aTenantReopenedWhileItsEvictedInstanceClosesBuildsOnlyOnceThatCloseEnded() async throws {
        let probe = LifetimeProbe()
        let gate = Barrier(parties: 2)
        let root = ScopeRoot(startingFrom: ScopedValues(), observers: [Tenancy(maximumOpen: 1, idleTimeout: nil)]) {
            $0.probe = probe
            $0.closeGate = gate
        }
        try await root.withScope(tenant: tenant("a")) {
            _ = try await ScopedValues.current.service(SlowClosingStoreKey.self)
        }
        // `b` takes `a`'s place; `a`'s close waits at the gate.
        try await root.withScope(tenant: tenant("b")) {}
        let reopened = Task {
            try await root.withScope(tenant: tenant("a")) {
                _ = try await ScopedValues.current.service(SlowClosingStoreKey.self)
            }
        }
        try await Task.sleep(for: .milliseconds(100))
        #expect(probe.builds(of: "slowStore") == 1)
        await gate.arrive()
        try await reopened.value
        #expect(probe.events == ["build slowStore", "close slowStore success", "build slowStore"])
        await root.shutdown()
    }

    @Test func evictingATenantNowLetsItsOpenScopeAndHandedOffWorkFinishThenClosesItsServices() async throws {
        // No idle timeout: only the eviction asked for can close the tenant.
        let (root, probe) = makeTenantRoot(idleTimeout: nil)
        let scope = try root.openScope(tenant: tenant("acme"))
        let store = try await scope.run { try await ScopedValues.current.service(TenantStoreKey.self) }
        let release = AsyncStream<Void>.makeStream()
        let handedOff = try await scope.run {
            // A generous bound: it only ends a test that failed (beside a full run, a 10 s one was passed).
            handOff(timeout: .seconds(60)) {
                for await _ in release.stream { break }
                // Still the evicted tenant's store, open until this work ends.
                try await ScopedValues.current.service(TenantStoreKey.self).insert("late")
            }
        }
        try await root.withScope(tenant: tenant("other")) {
            _ = try await ScopedValues.current.service(TenantStoreKey.self)
        }
        let evicting = Task { await root.evictTenant(tenant("acme")) }
        // Out of the table at once: the next scope of acme opens a new instance with new services.
        try await waitUntil { root.tenantStatistics == TenantStatistics(open: 1, evicted: 1) }
        let reopened = Task {
            try await root.withScope(tenant: tenant("acme")) {
                try await ScopedValues.current.service(TenantStoreKey.self)
            }
        }
        try await Task.sleep(for: .milliseconds(100))
        // The open scope still uses its services; nothing of acme has closed, nothing new is built.
        #expect(try await scope.run { try await ScopedValues.current.service(TenantStoreKey.self) } === store)
        #expect(!probe.events.contains("close tenantStore acme success"))
        #expect(probe.builds(of: "tenantStore acme") == 1)
        try await scope.close(.success)
        try await Task.sleep(for: .milliseconds(50))
        #expect(!probe.events.contains("close tenantStore acme success"), "closed before the handed-off work ended")
        release.continuation.yield()
        try await handedOff.value
        #expect(await evicting.value)
        #expect(store.all == ["late"])
        #expect(probe.events.filter { $0.hasPrefix("close tenantStore") } == ["close tenantStore acme success"])
        // The new instance was built only after the evicted one closed.
        let fresh = try await reopened.value
        #expect(fresh !== store)
        #expect(probe.events.suffix(2) == ["close tenantStore acme success", "build tenantStore acme"])
        // The other tenant was untouched, and a tenant that is not open is not evicted.
        #expect(!probe.events.contains("close tenantStore other success"))
        #expect(!(await root.evictTenant(tenant("nobody"))))
        await root.shutdown()
    }

    @Test func handedOffWorkKeepsItsTenantAndItsTenantsServicesAcrossAReload() async throws {
        let (first, probe) = makeTenantRoot()
        let reloadable = ReloadableScopeRoot(first)
        let release = AsyncStream<Void>.makeStream()
        let seen = Mutex<(TenantID?, ObjectIdentifier?)>((nil, nil))
        let (task, before) = try await reloadable.current.withScope(tenant: tenant("acme")) {
            let store = try await ScopedValues.current.service(TenantStoreKey.self)
            let task = handOff(timeout: .seconds(10)) {
                for await _ in release.stream { break }
                let store = try await ScopedValues.current.service(TenantStoreKey.self)
                seen.withLock { $0 = (ScopedValues.current.tenant, ObjectIdentifier(store)) }
            }
            return (task, ObjectIdentifier(store))
        }
        // A reload: new requests of acme go to the new root's acme, with a store of its own.
        let (second, _) = makeTenantRoot()
        let previous = reloadable.replace(with: second)
        let after = try await reloadable.current.withScope(tenant: tenant("acme")) {
            ObjectIdentifier(try await ScopedValues.current.service(TenantStoreKey.self))
        }
        #expect(after != before)
        // The work handed off before it finishes on the root it started on, with the same store.
        release.continuation.yield()
        try await task.value
        #expect(seen.withLock { $0 } == (tenant("acme"), before))
        await previous.shutdown()
        #expect(probe.openCount == 0)
        await second.shutdown()
    }

    @Test func shutdownClosesTenantServicesBeforeAppServicesAndRefusesNewTenantScopes() async throws {
        let (root, probe) = makeTenantRoot()
        try await root.withScope(tenant: tenant("a")) {
            _ = try await ScopedValues.current.service(AppClockKey.self)
            _ = try await ScopedValues.current.service(TenantStoreKey.self)
        }
        await root.shutdown()
        #expect(probe.events.suffix(2) == ["close tenantStore a success", "close appClock success"])
        #expect(throws: ScopedError.scopeEnded(entry: "tenant a")) { try root.openScope(tenant: tenant("a")) }
    }
}

/// A count shared by concurrent tasks.
final class Tally: Sendable {
    private let count = Atomic<Int>(0)
    func add(_ amount: Int) { count.add(amount, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}

/// Polls `condition` every 5 ms for at most 10 s.
private func waitUntil(_ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(10)
    while !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("condition not met within 10 s")
            return
        }
        try await Task.sleep(for: .milliseconds(5))
    }
}
