/// Told what a root's scopes and services do: the one way a feature outside the kernel plugs
/// into a root.
///
/// A root is created with the observers it reports to (`ScopeRoot(observers:)`), and asks each
/// for the observer of that root with ``forRoot(registering:)``. Then it tells them, in the
/// order given, when a scope opens and ends, runs each service's construction and close inside
/// theirs, the first observer outermost, tells them which service each construction reads, and
/// asks them for the value of an entry no scope set. A root created with none does nothing of
/// this: no call, no lock, one emptiness check per scope, per service and per read inside a
/// construction, and a `nil` check per read of an entry no scope set. ``ScopeRoot/observers(_:)`` finds a
/// root's observers of a type, so that a module reaches what its observer recorded.
///
/// Every requirement has a default that does nothing, so an observer writes only what it needs.
/// ScopedInstrumentation's `ScopeInstrumentation` (spans and metrics) is one:
///
/// ```swift
/// struct BuildLog: ScopeObserver {
///     let log: @Sendable (String) -> Void
///     // Builds and closes only: no call for scopes or reads.
///     var events: ScopeObserverEvents { .services }
///
///     func build<Value>(
///         _ service: any ScopedServiceKey.Type,
///         _ operation: () async throws -> Value
///     ) async throws -> Value {
///         log("building \(service.name)")
///         return try await operation()
///     }
/// }
///
/// let root = ScopeRoot(observers: [BuildLog { print($0) }])
/// ```
///
/// The calls are made on the task that opens, ends, builds or closes, inside the request's own
/// work: an observer must be quick and must not block. `build` and `close` run their operation
/// exactly once and return or throw what it did (an observer may wrap the operation in a span
/// or a task-local binding, and must not run it on another task).
public protocol ScopeObserver: Sendable {
    /// The events this observer takes: a root tells it only those, and an event no observer of
    /// the root takes costs nothing but an emptiness check. By default, all of them.
    var events: ScopeObserverEvents { get }

    /// The observer that a root created with this one reports to, given the services
    /// registered on the root: by default, this observer itself; `nil` when there is nothing to
    /// observe (instrumentation with nowhere to report), so that the root runs as one with no
    /// observer.
    ///
    /// Called once per root, when it is created (a reload creates a new root, and calls it
    /// again): the place to prepare what each service's events need, so that they need no lock.
    func forRoot(registering services: [any ScopedServiceKey.Type]) -> (any ScopeObserver)?

    /// A scope opened on the root (a request's, a job's, a tenant's request) with `values`;
    /// `site` is where its work was handed off (`MyApp/Jobs.swift:12`) for a scope that
    /// ``handOff(timeout:fileID:line:operation:)`` opened, and `nil` for any other.
    ///
    /// ``ScopedValues/scopeID`` tells it from the other scopes open, and is the same when it
    /// ends.
    func scopeOpened(_ values: ScopedValues, handedOffAt site: HandedOffWork.Site?)

    /// The scope opened with `values` ended with `outcome`, after its services closed.
    func scopeEnded(_ values: ScopedValues, outcome: ScopeOutcome)

    /// Runs `operation`, the construction of the service `service`, once, and returns what it
    /// returns or throws what it throws.
    ///
    /// The services the construction reads are built inside `operation`, so their `build` runs
    /// nested inside this one.
    nonisolated(nonsending) func build<Value>(
        _ service: any ScopedServiceKey.Type,
        _ operation: () async throws -> Value
    ) async throws -> Value

    /// Runs `operation`, the close of the service `service` told `outcome`, once, and throws
    /// what it throws.
    nonisolated(nonsending) func close(
        _ service: any ScopedServiceKey.Type,
        outcome: ScopeOutcome,
        _ operation: () async throws -> Void
    ) async throws

    /// The construction of the service `reader` read the service `service`, or was refused it:
    /// `refusal` is the ``ScopedError/cycle(chain:)`` or ``ScopedError/captiveDependency(chain:)``
    /// the read threw.
    ///
    /// Told for every read made while a service is built, on this root or its scopes (a
    /// request's session reading the application's database, each time a request builds one);
    /// reads outside a construction are not told.
    func serviceRead(_ service: any ScopedServiceKey.Type, by reader: any ScopedServiceKey.Type, refusal: ScopedError?)

    /// The app service `service` was built by this root in `duration`, reading `inputs`: the
    /// entries, objects and given services it read, with their values (its reads of services
    /// were told to ``serviceRead(_:by:refusal:)``).
    ///
    /// Told too, with no duration, for a service another root built and this root adopted
    /// (``ScopeRoot/adopt(_:reading:services:)``), followed by the reads of services its
    /// construction made there.
    func appServiceBuilt(_ service: any ScopedServiceKey.Type, in duration: Duration?, reading inputs: [ScopeInput])

    /// The value a read of the entry `key` returns when no scope set it, in place of the key's
    /// ``ScopedKey/defaultValue``; `nil` (the default) for that.
    ///
    /// Asked in the order the observers were installed, until one answers: how a test library
    /// makes a live-only entry (one with a ``ScopedKey/testValue``) read its stand-in, and
    /// records the test's failure to override it. Taken with ``ScopeObserverEvents/defaultReads``
    /// only: the read of an entry set in a scope never asks.
    func defaultValue<Key: ScopedKey>(for key: Key.Type) -> Key.Value?
}

extension ScopeObserver {
    /// All of them.
    public var events: ScopeObserverEvents { .all }

    /// This observer itself.
    public func forRoot(registering services: [any ScopedServiceKey.Type]) -> (any ScopeObserver)? { self }

    /// Does nothing.
    public func scopeOpened(_ values: ScopedValues, handedOffAt site: HandedOffWork.Site?) {}

    /// Does nothing.
    public func scopeEnded(_ values: ScopedValues, outcome: ScopeOutcome) {}

    /// Runs `operation`.
    nonisolated(nonsending) public func build<Value>(
        _ service: any ScopedServiceKey.Type,
        _ operation: () async throws -> Value
    ) async throws -> Value {
        try await operation()
    }

    /// Runs `operation`.
    nonisolated(nonsending) public func close(
        _ service: any ScopedServiceKey.Type,
        outcome: ScopeOutcome,
        _ operation: () async throws -> Void
    ) async throws {
        try await operation()
    }

    /// Does nothing.
    public func serviceRead(
        _ service: any ScopedServiceKey.Type,
        by reader: any ScopedServiceKey.Type,
        refusal: ScopedError?
    ) {}

    /// Does nothing.
    public func appServiceBuilt(
        _ service: any ScopedServiceKey.Type,
        in duration: Duration?,
        reading inputs: [ScopeInput]
    ) {}

    /// `nil`: the key's own default.
    public func defaultValue<Key: ScopedKey>(for key: Key.Type) -> Key.Value? { nil }
}

/// The kinds of event a ``ScopeObserver`` takes.
public struct ScopeObserverEvents: OptionSet, Sendable {
    /// The kinds, one bit each.
    public let rawValue: Int

    /// Events of these kinds.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// ``ScopeObserver/scopeOpened(_:handedOffAt:)`` and ``ScopeObserver/scopeEnded(_:outcome:)``.
    public static let scopes = ScopeObserverEvents(rawValue: 1 << 0)
    /// ``ScopeObserver/build(_:_:)`` and ``ScopeObserver/close(_:outcome:_:)``.
    public static let services = ScopeObserverEvents(rawValue: 1 << 1)
    /// ``ScopeObserver/serviceRead(_:by:refusal:)`` for every read made while a service is
    /// built, and ``ScopeObserver/appServiceBuilt(_:in:reading:)``: ``appReads`` and the reads
    /// of scope and tenant services' constructions.
    public static let reads = ScopeObserverEvents(rawValue: 1 << 2 | 1 << 3)
    /// ``ScopeObserver/appServiceBuilt(_:in:reading:)`` and
    /// ``ScopeObserver/serviceRead(_:by:refusal:)`` for the reads of app services'
    /// constructions only: made once per root, never per request.
    public static let appReads = ScopeObserverEvents(rawValue: 1 << 3)
    /// ``ScopeObserver/defaultValue(for:)``, asked on every read of an entry no scope set.
    ///
    /// Not an event told but a question asked, on the most common read there is, so not part
    /// of ``all``: an observer takes it only to answer it (a test's, for live-only entries).
    public static let defaultReads = ScopeObserverEvents(rawValue: 1 << 4)
    /// Not an event: the events of the roots created in this root's scopes as well (roots
    /// whose values start from one of its scopes', such as an application a test builds), which
    /// report to this observer after their own, and pass it on to theirs.
    public static let nestedRoots = ScopeObserverEvents(rawValue: 1 << 5)
    /// Every event a root tells: ``scopes``, ``services`` and ``reads``.
    public static let all: ScopeObserverEvents = [.scopes, .services, .reads]
}

extension ScopeRoot {
    /// The observers of type `O` this root reports to (what installed observers'
    /// ``ScopeObserver/forRoot(registering:)`` returned), in the order installed, and its
    /// ``TenantProvider`` last.
    ///
    /// How a module reaches what its observer recorded for this root (ScopedDiagnostics'
    /// `dependencyGraph()` reads its recorder this way), or tells the observers that take its
    /// own events, `O` being a protocol of the module's (ScopedReload's `ReloadObserver`).
    public func observers<O>(_ type: O.Type) -> [O] {
        let observers = context.registry.observers.all(type)
        guard let provider = tenantProvider as? O else { return observers }
        return observers + [provider]
    }
}
