/// A key for a service with a lifetime: built asynchronously on first use, once per owning scope,
/// and closed when that scope ends.
///
/// Declare the lifetime and the construction on the key, and an async property to read it:
///
/// ```swift
/// enum SessionKey: ScopedServiceKey {
///     static let lifetime = ScopedLifetime.scope
///     static func makeValue() async throws -> Session {
///         // `database`: an app service of your own, declared the same way.
///         Session(database: try await ScopedValues.current.database)
///     }
///     static func close(_ session: Session, outcome: ScopeOutcome) async throws {
///         try await session.finish(committing: outcome.isSuccess)
///     }
/// }
///
/// extension ScopedValues {
///     var session: Session { get async throws { try await service(SessionKey.self) } }
/// }
/// ```
///
/// ``makeValue()`` runs with the owning scope current: the application root for
/// ``ScopedLifetime/app`` services, so they never see a request's overrides. An app service
/// that reads a ``ScopedLifetime/scope`` service while it is built is refused with
/// ``ScopedError/captiveDependency(chain:)``; a service that needs itself, with
/// ``ScopedError/cycle(chain:)``.
public protocol ScopedServiceKey: Sendable {
    /// The type of the service.
    associatedtype Value: Sendable

    /// Which scope owns the service and how long it lives.
    static var lifetime: ScopedLifetime { get }

    /// The name diagnostics and errors use; by default the key's type name without a `Key`
    /// suffix, lower-camel-cased (`MovieRepositoryKey` → `movieRepository`, `URLSessionKey` →
    /// `urlSession`).
    static var name: String { get }

    /// Builds the service. Concurrent first readers in one scope share one construction.
    static func makeValue() async throws -> Value

    /// Closes a service its scope built, when the scope ends. Does nothing by default.
    ///
    /// Services close in the reverse order of their construction; every close runs even when
    /// another throws.
    static func close(_ value: Value, outcome: ScopeOutcome) async throws

    /// How long ``close(_:outcome:)`` may run before it is abandoned and reported as a
    /// ``ScopeCloseError/Timeout``, so that a close that never returns cannot hold its scope or a
    /// shutdown; `nil` (the default) uses the root's `closeTimeout`.
    static var closeTimeout: Duration? { get }

    /// Whether ``close(_:outcome:)`` bounds its own waiting: every wait in it ends at a deadline
    /// of its own (a database session's commit, which its statement timeout interrupts).
    ///
    /// Such a close runs inline in the closing task, with no task or timer for the close timeout.
    /// `false` (the default): the close runs under ``closeTimeout`` or the root's, abandoned when
    /// it runs past it, which costs it a task of its own.
    static var closeBoundsItself: Bool { get }
}

extension ScopedServiceKey {
    /// The key's type name without a `Key` suffix, lower-camel-cased.
    public static var name: String { KeyNames.entryName(fromTypeName: String(describing: Self.self)) }

    /// Does nothing: most services need no close.
    public static func close(_ value: Value, outcome: ScopeOutcome) async throws {}

    /// `nil`: the root's close timeout applies.
    public static var closeTimeout: Duration? { nil }

    /// `false`: a close timeout, where one applies, bounds the close.
    public static var closeBoundsItself: Bool { false }
}

/// How long a service's value lives, and which scope owns it.
///
/// From the longest to the shortest: ``app``, ``tenant``, ``scope``. A service may read
/// services of its own lifetime or a longer one while it is built; reading a shorter-lived one
/// would keep it past its owner's end, and is refused as a captive dependency.
public enum ScopedLifetime: String, Hashable, Sendable, Codable, CustomStringConvertible {
    /// Built once per application root, on first use, and closed when the root shuts down.
    case app
    /// Built once per tenant, on the first use by one of the tenant's scopes, shared by that
    /// tenant's scopes only, and closed when the tenant is evicted, after its last scope ended.
    ///
    /// Read in a scope that belongs to no tenant, it throws ``ScopedError/outsideTenant(entry:)``.
    /// The tenants a root opens are its ``TenantProvider``'s: ScopedTenants' `Tenancy`.
    case tenant
    /// Built once per scope opened with `withScope`, on first use in it, and closed when that
    /// scope ends, told how it ended.
    case scope

    /// A description for logs and error messages.
    public var description: String { rawValue }

    /// Whether a service of this lifetime outlives one of `other`'s: an ``app`` service
    /// outlives ``tenant`` and ``scope`` ones, a ``tenant`` service outlives ``scope`` ones.
    func outlives(_ other: ScopedLifetime) -> Bool {
        rank < other.rank
    }

    private var rank: Int {
        switch self {
        case .app: 0
        case .tenant: 1
        case .scope: 2
        }
    }
}
