import Scoped
import ScopedTenants
import Synchronization
import Testing

// The kernel's tenant extension point, used as a third party would: this file imports the core
// without `@testable`, so the provider below is written on public API only.

/// A tenant's resource that says when it was closed.
private final class Ledger: Sendable {
    let tenant: TenantID?
    private let closedFlag = Atomic<Bool>(false)
    init(tenant: TenantID?) { self.tenant = tenant }
    var isClosed: Bool { closedFlag.load(ordering: .acquiring) }
    func close() { closedFlag.store(true, ordering: .releasing) }
}

private enum LedgerKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.tenant
    static func makeValue() async throws -> Ledger {
        ScopedValues.current.ledgersBuilt?.add(1)
        return Ledger(tenant: ScopedValues.current.tenant)
    }
    static func close(_ ledger: Ledger, outcome: ScopeOutcome) async throws { ledger.close() }
}

private final class Counter: Sendable {
    private let value = Atomic<Int>(0)
    func add(_ amount: Int) { value.wrappingAdd(amount, ordering: .relaxed) }
    var count: Int { value.load(ordering: .relaxed) }
}

extension ScopedValues {
    @Entry fileprivate var ledgersBuilt: Counter? = nil
    @Entry fileprivate var ledgerLabel: String = "root"
}

/// The smallest provider: opens each tenant on its first scope, never evicts one, refuses
/// `closed-*` tenants, and closes every tenant at the root's shutdown.
private final class KeepEveryTenant: TenantProvider {
    private let open = Mutex<[TenantID: OpenTenant]>([:])

    var events: ScopeObserverEvents { [] }

    func tenant(_ id: TenantID, of root: ScopeRoot, startingFrom base: ScopedValues) throws -> OpenTenant {
        guard !id.rawValue.hasPrefix("closed-") else { throw TenantRefused(tenant: id) }
        return try open.withLock { open in
            let tenant = try open[id] ?? root.openTenant(id, startingFrom: base) { $0.ledgerLabel = "\(id)" }
            tenant.reserveScope()
            open[id] = tenant
            return tenant
        }
    }

    nonisolated(nonsending) func shutdown() async {
        for tenant in takeAll() { await tenant.close() }
    }

    /// Lets go of every open tenant without closing it.
    func forgetAll() { _ = takeAll() }

    /// Every open tenant, taken out of the table.
    private func takeAll() -> [OpenTenant] {
        open.withLock { open in
            defer { open = [:] }
            return Array(open.values)
        }
    }

    var openTenants: [TenantID: OpenTenant] { open.withLock { $0 } }
}

private struct TenantRefused: Error, Equatable {
    let tenant: TenantID
}

struct TenantProviderTests {
    private let acme = TenantID("acme")!

    @Test func aProviderOnPublicAPIOpensEachTenantOnceAndTheRootClosesThemAtShutdown() async throws {
        let built = Counter()
        let provider = KeepEveryTenant()
        let root = ScopeRoot(startingFrom: ScopedValues(), observers: [provider]) { $0.ledgersBuilt = built }
        let first = try await root.withScope(tenant: acme) {
            #expect(ScopedValues.current.ledgerLabel == "acme")
            #expect(provider.openTenants[acme]?.openScopeCount == 1)
            #expect(provider.openTenants[acme]?.idleTime == nil)
            return try await ScopedValues.current.service(LedgerKey.self)
        }
        let again = try await root.withScope(tenant: acme) { try await ScopedValues.current.service(LedgerKey.self) }
        #expect(first === again)
        #expect(built.count == 1)
        let tenant = try #require(provider.openTenants[acme])
        #expect(tenant.openScopeCount == 0)
        #expect(try #require(tenant.idleTime) >= .zero)
        #expect(!first.isClosed)
        await root.shutdown()
        #expect(first.isClosed)
        #expect(provider.openTenants.isEmpty)
    }

    @Test func whatTheProviderThrowsRefusesTheScopeAndNothingIsCountedOpen() async throws {
        let root = ScopeRoot(startingFrom: ScopedValues(), observers: [KeepEveryTenant()]) { _ in }
        let refused = TenantID("closed-acme")!
        await #expect(throws: TenantRefused(tenant: refused)) {
            try await root.withScope(tenant: refused) { Issue.record("the scope ran") }
        }
        #expect(throws: TenantRefused(tenant: refused)) { try root.openScope(tenant: refused) }
        #expect(root.openScopeCount == 0)
        await root.shutdown()
    }

    @Test func anUpdateThatThrowsGivesBackTheScopeItsProviderReserved() async throws {
        let provider = KeepEveryTenant()
        let root = ScopeRoot(startingFrom: ScopedValues(), observers: [provider]) { _ in }
        try await root.withScope(tenant: acme) {}
        struct UpdateFailed: Error {}
        #expect(throws: UpdateFailed.self) { try root.openScope(tenant: acme) { _ in throw UpdateFailed() } }
        #expect(provider.openTenants[acme]?.openScopeCount == 0)
        #expect(root.openScopeCount == 0)
        await root.shutdown()
    }

    @Test func aRootDiscardedWithoutShutdownReleasesItsProviderAndItsTenants() async throws {
        weak var provider: KeepEveryTenant?
        weak var ledger: Ledger?
        do {
            let root = ScopeRoot(startingFrom: ScopedValues(), observers: [KeepEveryTenant()]) { _ in }
            provider = root.observers(KeepEveryTenant.self).first
            ledger = try await root.withScope(tenant: acme) { try await ScopedValues.current.service(LedgerKey.self) }
            #expect(provider != nil && ledger != nil)
        }
        // Not closed (nothing shut it down), and not held either: the provider holds the tenants,
        // whose owners refer to the root's registry, which does not hold the provider. Nothing
        // had to be told, so no provider can forget to let go.
        #expect(provider == nil)
        #expect(ledger == nil)
    }

    @Test func aTenantItsProviderLetsGoOfIsReleasedWithoutBeingClosed() async throws {
        let provider = KeepEveryTenant()
        let root = ScopeRoot(startingFrom: ScopedValues(), observers: [provider]) { _ in }
        weak var ledger: Ledger?
        weak var tenant: OpenTenant?
        ledger = try await root.withScope(tenant: acme) { try await ScopedValues.current.service(LedgerKey.self) }
        tenant = provider.openTenants[acme]
        #expect(tenant != nil && ledger != nil)
        // Neither closed nor told anything: the tenant's owner and its values hold each other
        // nowhere, so dropping the last reference releases both, and the service it built.
        provider.forgetAll()
        #expect(tenant == nil)
        #expect(ledger == nil)
        await root.shutdown()
    }

    @Test func aRootDiscardedWithATenancyKeepsNoneOfItsTenants() async throws {
        weak var ledger: Ledger?
        do {
            let root = ScopeRoot(startingFrom: ScopedValues(), observers: [Tenancy(idleTimeout: nil)]) { _ in }
            ledger = try await root.withScope(tenant: acme) { try await ScopedValues.current.service(LedgerKey.self) }
            #expect(root.tenantStatistics.open == 1)
        }
        #expect(ledger == nil)
    }
}
