@testable import Scoped
import ScopedReload
import ScopedTenants
import Synchronization
import Testing

/// Writes every event it is told into a shared journal, prefixed with its name.
private struct JournalObserver: ReloadObserver, TenantObserver {
    let name: String
    let journal: Journal
    /// Whether `forRoot` declines: then the root must never call it.
    var declines = false
    var events = ScopeObserverEvents.all

    func forRoot(registering services: [any ScopedServiceKey.Type]) -> (any ScopeObserver)? {
        journal.append("\(name) root: \(services.map { $0.name }.joined(separator: ","))")
        return declines ? nil : self
    }

    func scopeOpened(_ values: ScopedValues, handedOffAt site: HandedOffWork.Site?) {
        journal.append("\(name) opened\(site.map { " at \($0)" } ?? "")")
    }

    func scopeEnded(_ values: ScopedValues, outcome: ScopeOutcome) {
        journal.append("\(name) ended \(outcome.name)")
    }

    func build<Value>(_ service: any ScopedServiceKey.Type, _ operation: () async throws -> Value) async throws -> Value
    {
        journal.append("\(name) build \(service.name)")
        do {
            let value = try await operation()
            journal.append("\(name) built \(service.name)")
            return value
        } catch {
            journal.append("\(name) failed \(service.name)")
            throw error
        }
    }

    func close(
        _ service: any ScopedServiceKey.Type,
        outcome: ScopeOutcome,
        _ operation: () async throws -> Void
    ) async throws {
        journal.append("\(name) close \(service.name) \(outcome.name)")
        do {
            try await operation()
        } catch {
            journal.append("\(name) close failed \(service.name)")
            throw error
        }
    }

    func serviceRead(_ service: any ScopedServiceKey.Type, by reader: any ScopedServiceKey.Type, refusal: ScopedError?)
    {
        journal.append("\(name) \(reader.name) read \(service.name)\(refusal == nil ? "" : " refused")")
    }

    func appServiceBuilt(_ service: any ScopedServiceKey.Type, in duration: Duration?, reading inputs: [ScopeInput]) {
        let names = inputs.map { $0.isService ? "given \($0.name)" : $0.name }
        journal.append(
            "\(name) app \(service.name) \(duration == nil ? "carried" : "timed") [\(names.joined(separator: ","))]"
        )
    }

    /// Never asked with `.all`: a read of an entry no scope set is asked only of an observer
    /// that takes `.defaultReads`.
    func defaultValue<Key: ScopedKey>(for key: Key.Type) -> Key.Value? {
        journal.append("\(name) asked \(Key.name)")
        return nil
    }

    func tenantsChanged(open: Int, evicted: Bool) {
        journal.append("\(name) tenants \(open)\(evicted ? " evicted" : "")")
    }

    func rootReloaded(generation: Int, applied: Bool) {
        journal.append("\(name) reload \(generation) \(applied ? "applied" : "rejected")")
    }
}

/// Answers the unset reads of `answers`' keys, and journals the scopes it is told of with the
/// identity they were opened with; inherited by nested roots when `nested`.
private final class AnsweringObserver: ScopeObserver {
    let name: String
    let journal: Journal
    let answers: [ObjectIdentifier: String]
    let nested: Bool
    /// The identity of every scope told opened and not ended yet, by the order it opened in.
    let open = Mutex<[ObjectIdentifier: Int]>([:])
    let opened = Atomic<Int>(0)

    init(name: String, journal: Journal, answers: [ObjectIdentifier: String], nested: Bool = true) {
        self.name = name
        self.journal = journal
        self.answers = answers
        self.nested = nested
    }

    var events: ScopeObserverEvents { nested ? [.scopes, .defaultReads, .nestedRoots] : [.scopes, .defaultReads] }

    func defaultValue<Key: ScopedKey>(for key: Key.Type) -> Key.Value? {
        journal.append("\(name) asked \(Key.name)")
        return answers[ObjectIdentifier(key)] as? Key.Value
    }

    func scopeOpened(_ values: ScopedValues, handedOffAt site: HandedOffWork.Site?) {
        let number = opened.add(1, ordering: .relaxed).newValue
        let id = values.scopeID!
        let isNew = open.withLock { $0.updateValue(number, forKey: id) == nil }
        journal.append("\(name) opened \(number)\(isNew ? "" : " twice")\(site.map { " handed off at \($0)" } ?? "")")
    }

    func scopeEnded(_ values: ScopedValues, outcome: ScopeOutcome) {
        let number = open.withLock { $0.removeValue(forKey: values.scopeID!) }
        journal.append("\(name) ended \(number.map(String.init) ?? "unknown")")
    }
}

private enum UnsetGreetingKey: ScopedKey {
    static let defaultValue = "own default"
}

private enum UnsetFarewellKey: ScopedKey {
    static let defaultValue = "own farewell"
}

private final class Journal: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
    func clear() { lines.withLock { $0 = [] } }
}

/// A root's one extension point: what its observers are told, in what order, and that a root
/// without one tells nothing.
struct ScopeObserverTests {
    private let journal = Journal()

    @Test func aRequestIsToldOpenedBuildsNestedClosesNewestFirstThenEnded() async throws {
        let root = ScopeRoot(
            startingFrom: ScopedValues(),
            services: [AppClockKey.self, GraphSessionKey.self],
            observers: [JournalObserver(name: "A", journal: journal)]
        ) { _ in }
        #expect(journal.all == ["A root: appClock,graphSession"])
        journal.clear()
        try await root.withScope {
            _ = try await ScopedValues.current.service(GraphSessionKey.self)
            _ = try await ScopedValues.current.service(SessionKey.self)
        }
        #expect(
            journal.all == [
                "A opened",
                // The app service the session reads is built inside the session's build.
                "A build graphSession", "A graphSession read appClock",
                "A build appClock", "A built appClock", "A app appClock timed [probe,serviceLabel]",
                "A built graphSession",
                "A build session", "A built session",
                "A close session success", "A close graphSession success",
                "A ended success",
            ]
        )
        journal.clear()
        await root.shutdown()
        // No tenancy installed: nothing is told of tenants.
        #expect(journal.all == ["A close appClock success"])
    }

    @Test func anObserverTakesOnlyTheEventsItAsksForAndRefusedReadsAreMarked() async throws {
        let root = ScopeRoot(
            startingFrom: ScopedValues(),
            services: [CaptiveRepositoryKey.self, SessionKey.self],
            onCloseError: { _ in },
            observers: [JournalObserver(name: "R", journal: journal, events: .reads)]
        ) { _ in }
        journal.clear()
        try await root.withScope {
            _ = try await ScopedValues.current.service(GraphSessionKey.self)
            _ = try await ScopedValues.current.service(GraphSessionKey.self)
        }
        // No scope, build or close: the read of the app service, and what it read when built.
        #expect(journal.all == ["R graphSession read appClock", "R app appClock timed [probe,serviceLabel]"])
        journal.clear()
        #expect(await root.validate().count == 1)
        #expect(journal.all == ["R captiveRepository read session refused"])
    }

    @Test func anObserverOfAppReadsHearsWhatAppServicesReadAndNothingPerRequest() async throws {
        let root = ScopeRoot(
            startingFrom: ScopedValues(),
            observers: [JournalObserver(name: "P", journal: journal, events: .appReads)]
        ) { _ in }
        journal.clear()
        for _ in 0..<2 {
            try await root.withScope {
                _ = try await ScopedValues.current.service(GraphSessionKey.self)
                _ = try await ScopedValues.current.service(DiamondLeftKey.self)
            }
        }
        // The request's session reading the app clock is not told, on either request; what the
        // app services read is, once.
        #expect(
            journal.all == [
                "P app appClock timed [probe,serviceLabel]",
                "P diamondLeft read diamondShared",
                "P app diamondShared timed [probe,serviceLabel]",
                "P app diamondLeft timed [barrier,given diamondShared]",
            ]
        )
        await root.shutdown()
    }

    @Test func observersNestInTheOrderGivenTheFirstOutermost() async throws {
        let root = ScopeRoot(
            startingFrom: ScopedValues(),
            observers: [JournalObserver(name: "A", journal: journal), JournalObserver(name: "B", journal: journal)]
        ) { _ in }
        journal.clear()
        try await root.withScope { _ = try await ScopedValues.current.service(SessionKey.self) }
        #expect(
            journal.all == [
                "A opened", "B opened",
                "A build session", "B build session", "B built session", "A built session",
                "A close session success", "B close session success",
                "A ended success", "B ended success",
            ]
        )
    }

    @Test func failuresReachTheObserverAsTheOperationThrewThem() async throws {
        let root = ScopeRoot(
            startingFrom: ScopedValues(),
            onCloseError: { _ in },
            observers: [JournalObserver(name: "A", journal: journal)]
        ) { _ in }
        journal.clear()
        await #expect(throws: ConstructionFailure.self) {
            try await root.withScope { _ = try await ScopedValues.current.service(BrokenKey.self) }
        }
        #expect(journal.all == ["A opened", "A build broken", "A failed broken", "A ended failure"])
        journal.clear()
        await #expect(throws: ScopeCloseError.self) {
            try await root.withScope { _ = try await ScopedValues.current.service(FailingCloseKey.self) }
        }
        #expect(
            journal.all == [
                "A opened", "A build failingClose", "A built failingClose",
                "A close failingClose success", "A close failed failingClose", "A ended success",
            ]
        )
    }

    @Test func anObserverThatDeclinesARootIsNeverCalledOnIt() async throws {
        let root = ScopeRoot(
            startingFrom: ScopedValues(),
            services: [SessionKey.self],
            observers: [JournalObserver(name: "A", journal: journal, declines: true)]
        ) { _ in }
        #expect(journal.all == ["A root: session"])
        try await root.withScope { _ = try await ScopedValues.current.service(SessionKey.self) }
        await root.shutdown()
        #expect(journal.all == ["A root: session"])
    }

    @Test func anObserverAnswersUnsetReadsInOrderAndIsNotAskedForWhatAScopeSet() async throws {
        let greeting = ObjectIdentifier(UnsetGreetingKey.self)
        let farewell = ObjectIdentifier(UnsetFarewellKey.self)
        let first = AnsweringObserver(name: "A", journal: journal, answers: [greeting: "from A"])
        let second = AnsweringObserver(name: "B", journal: journal, answers: [greeting: "from B", farewell: "from B"])
        let root = ScopeRoot(startingFrom: ScopedValues(), observers: [first, second]) { _ in }
        let read = try await root.withScope {
            let values = ScopedValues.current
            return [values[UnsetGreetingKey.self], values[UnsetFarewellKey.self]]
        }
        #expect(read == ["from A", "from B"])
        journal.clear()
        let set = try await root.withScope({ $0[UnsetGreetingKey.self] = "set" }) {
            ScopedValues.current[UnsetGreetingKey.self]
        }
        #expect(set == "set")
        #expect(journal.all == ["A opened 2", "B opened 2", "A ended 2", "B ended 2"])
        // A root with no such observer reads the key's own default.
        let plain = ScopeRoot(startingFrom: ScopedValues()) { _ in }
        #expect(try await plain.withScope { ScopedValues.current[UnsetGreetingKey.self] } == "own default")
    }

    @Test func rootsMadeInAScopeReportToTheObserversThatTakeNestedRootsAndPassThemOn() async throws {
        let greeting = ObjectIdentifier(UnsetGreetingKey.self)
        let nested = AnsweringObserver(name: "N", journal: journal, answers: [greeting: "nested"])
        let own = AnsweringObserver(name: "O", journal: journal, answers: [greeting: "own"], nested: false)
        let root = ScopeRoot(startingFrom: ScopedValues(), observers: [own, nested]) { _ in }
        let handOffLine = Mutex(0)
        try await root.withScope {
            let app = ScopeRoot(startingFrom: ScopedValues.current) { _ in }
            let read = try await app.withScope { () async throws -> String in
                // A root made in the app's scope reports to it as well.
                let inner = ScopeRoot(startingFrom: ScopedValues.current) { _ in }
                try await inner.withScope { _ = ScopedValues.current[UnsetGreetingKey.self] }
                let line = #line + 1
                try await handOff(timeout: .seconds(5)) {}.value
                handOffLine.withLock { $0 = line }
                return ScopedValues.current[UnsetGreetingKey.self]
            }
            #expect(read == "nested")
            // A root that starts from defaults is not made in the scope: it reports to nothing.
            let apart = ScopeRoot(startingFrom: ScopedValues()) { _ in }
            #expect(try await apart.withScope { ScopedValues.current[UnsetGreetingKey.self] } == "own default")
        }
        #expect(
            journal.all == [
                "O opened 1", "N opened 1",
                // The app's request; its root is not the installed one, so `O` is not told.
                "N opened 2",
                "N opened 3", "N asked unsetGreeting", "N ended 3",
                "N opened 4 handed off at ScopedTests/ScopeObserverTests.swift:\(handOffLine.withLock { $0 })",
                "N ended 4",
                "N asked unsetGreeting",
                "N ended 2",
                "O ended 1", "N ended 1",
            ]
        )
    }

    @Test func tenantsAndReloadsAreToldToTheRootTheyConcern() async throws {
        let observer = JournalObserver(name: "A", journal: journal)
        let first = ScopeRoot(startingFrom: ScopedValues(), observers: [observer, Tenancy()]) { _ in }
        let acme = try #require(TenantID("acme"))
        try await first.withScope(tenant: acme) { _ = try await ScopedValues.current.service(SessionKey.self) }
        #expect(journal.all.contains("A tenants 1"))
        #expect(await first.evictTenant(acme))
        #expect(journal.all.contains("A tenants 0 evicted"))
        let reloadable = ReloadableScopeRoot(first)
        journal.clear()
        let second = ScopeRoot(startingFrom: ScopedValues(), services: [SessionKey.self], observers: [observer]) { _ in
        }
        _ = try await reloadable.reload(to: second)
        // The new root asked for its observer, then was told it became generation 2.
        #expect(journal.all.first == "A root: session")
        #expect(journal.all.last == "A reload 2 applied")
        await first.shutdown()
        await second.shutdown()
    }
}
