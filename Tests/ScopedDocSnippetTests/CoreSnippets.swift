import Foundation
import Logging
import NIOCore
import Scoped
import ScopedReload
import ScopedSQLite
import ScopedTenants
import ScopedTestSupport
import Synchronization
import Testing

// The snippets of the core's doc comments (Sources/Scoped), verbatim between the markers, with
// stand-ins for the types and values they assume. Code at the top level compiles; code inside a
// function compiles, and the tests below run what can run without a server.

// MARK: Stand-ins

protocol MovieRepository: Sendable {
    func title(of id: Int) async throws -> String?
}

struct SQLiteMovieRepository: MovieRepository {
    func title(of id: Int) async throws -> String? { "from SQLite" }
}

struct InMemoryMovieRepository: MovieRepository {
    static func fixture() -> InMemoryMovieRepository { InMemoryMovieRepository() }
    func title(of id: Int) async throws -> String? { "from memory" }
}

protocol Mailer: Sendable {}
struct SMTPMailer: Mailer {}
struct UnimplementedMailer: Mailer {}

struct Theme: Sendable {
    var cornerRadius = 8.0
    static let standard = Theme()
}

final class Library: Sendable {}

final class AuditLog: Sendable {
    let recorded = Mutex<[String]>([])
    func record() { recorded.withLock { $0.append(ScopedValues.current.copyright) } }
}

final class NoteRepository: Sendable {
    func add(_ note: String) async throws {}
}

final class Database: Sendable {}

final class Session: Sendable {
    let database: Database
    init(database: Database) { self.database = database }
    func finish(committing: Bool) async throws {}
}

enum DatabaseKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.app
    static func makeValue() async throws -> Database { Database() }
    static func close(_ database: Database, outcome: ScopeOutcome) async throws {}
}

extension ScopedValues {
    var database: Database { get async throws { try await service(DatabaseKey.self) } }
    @Entry var noteRepository: NoteRepository = NoteRepository()
}

// MARK: Declarations

// SNIPPET-BEGIN
extension ScopedValues {
    @Entry var movieRepository: any MovieRepository = SQLiteMovieRepository()
    @Entry var userName: String? = nil
}
// SNIPPET-END

// SNIPPET-BEGIN
extension ScopedValues {
    @Entry(testValue: UnimplementedMailer())
    var mailer: any Mailer = SMTPMailer()
}
// SNIPPET-END

// SNIPPET-BEGIN
private struct ThemeKey: ScopedKey {
    static let defaultValue = Theme.standard
}

extension ScopedValues {
    var theme: Theme {
        get { self[ThemeKey.self] }
        set { self[ThemeKey.self] = newValue }
    }
}
// SNIPPET-END

// SNIPPET-BEGIN
extension ScopedValues {
    @Entry var copyright: String = "© Scoped"
}
// SNIPPET-END

func printingAnOverride() {
    // SNIPPET-BEGIN
    withScopedValues({ $0.copyright = "© Request" }) {
        print(ScopedValues.current.copyright)  // © Request
    }
    // SNIPPET-END
}

// SNIPPET-BEGIN
enum SessionKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.scope
    static func makeValue() async throws -> Session {
        // `database`: an app service of your own, declared the same way.
        Session(database: try await ScopedValues.current.database)
    }
    static func close(_ session: Session, outcome: ScopeOutcome) async throws {
        try await session.finish(committing: outcome.isSuccess)
    }
}

extension ScopedValues {
    var session: Session { get async throws { try await service(SessionKey.self) } }
}
// SNIPPET-END

// SNIPPET-BEGIN
struct MovieDetails {
    @Scoped(\.movieRepository) var movies  // an entry
    @Scoped(\.theme.cornerRadius) var radius  // a key path into an entry
    @Scoped(Library.self) var library  // an object: `Library?`, nil when no scope set one

    func branch() throws -> Library {
        try ScopedValues.current.require(Library.self)  // an object that must be there
    }
}
// SNIPPET-END

// MARK: Statements, in functions that give them their surroundings

func readingAService() async throws -> Session {
    // SNIPPET-BEGIN
    let session = try await ScopedValues.current.service(SessionKey.self)
    // SNIPPET-END
    return session
}

func overridingForOneCall() -> String {
    // SNIPPET-BEGIN
    let title = withScopedValues({ $0.copyright = "© Request" }) {
        ScopedValues.current.copyright
    }
    // SNIPPET-END
    return title
}

func carryingValuesIntoDetachedWork(audit: AuditLog) {
    // SNIPPET-BEGIN
    let values = ScopedValues.current
    Task.detached {
        withScopedValues(values) { audit.record() }
    }
    // SNIPPET-END
}

func servingRequests(id: String, request: String, handle: (String) async throws -> Void) async throws {
    // SNIPPET-BEGIN
    let root = ScopeRoot(services: [DatabaseKey.self, SessionKey.self]) {
        $0.movieRepository = SQLiteMovieRepository()
    }
    let problems = await root.validate()  // before binding the port
    try await root.withScope({ $0.requestID = id }) {
        try await handle(request)
    }
    await root.shutdown()
    // SNIPPET-END
    _ = problems
}

func validatingAtStartUp(root: ScopeRoot, logger: Logger) async {
    // SNIPPET-BEGIN
    let problems = await root.validate()
    guard problems.isEmpty else {
        for problem in problems { logger.critical("\(problem)") }
        exit(1)
    }
    // SNIPPET-END
}

func openingAScopeByHand(
    root: ScopeRoot,
    id: String,
    request: String,
    handler: (String) async throws -> String
) async throws -> String {
    // SNIPPET-BEGIN
    let scope = try root.openScope { $0.requestID = id }
    let response = try await scope.run { try await handler(request) }
    // … the response body is written later, also inside `scope.run` …
    try await scope.close(.success)
    // SNIPPET-END
    return response
}

func applyingTheRequestIDRule(root: ScopeRoot, incomingHeader: String) -> Scope {
    // SNIPPET-BEGIN
    let requestID = RequestIDs.accepting(incomingHeader) ?? RequestIDs.next()
    let scope = root.openScope { $0.requestID = requestID }
    // SNIPPET-END
    return scope
}

func answeringEachMessage(messages: AsyncStream<String>, replies: borrowing Mutex<[Bool]>) async throws {
    func reply(saved: Bool) async throws { replies.withLock { $0.append(saved) } }
    // SNIPPET-BEGIN
    try await messages.forEachMessage { note in
        try await ScopedValues.current.noteRepository.add(note)
    } then: { result in
        try await reply(saved: (try? result.get()) != nil)
    }
    // SNIPPET-END
}

/// A connection an adapter writes a response's chunks to.
struct Connection {
    func write(_ chunk: ByteBuffer) async throws {}
}

func holdingTheLastChunkBack(scope: Scope, chunk: ByteBuffer, connection: Connection, error: any Error) async throws {
    // SNIPPET-BEGIN
    let body = HeldBackBody<ByteBuffer>(scope: scope)
    // For each chunk the handler's body writes:
    if let previous = body.hold(chunk) { try await body.sending { try await connection.write(previous) } }
    // When the handler's body ends:
    if let last = try await body.finish() { try await body.sending { try await connection.write(last) } }
    // When it throws:
    await body.fail(with: error)
    // SNIPPET-END
}

func reloadingByHand(reloadable: ReloadableScopeRoot, newRoot: ScopeRoot, logger: Logger) async throws {
    // SNIPPET-BEGIN
    let reload = try await reloadable.reload(to: newRoot)
    logger.notice("Reloaded: \(reload.summary)")
    await reload.previous.shutdown(abandoningAfter: .seconds(10))
    // SNIPPET-END
}

func followingConfiguration(
    reloadable: ReloadableScopeRoot,
    snapshots: AsyncStream<Int>,
    makeRoot: (Int) throws -> ScopeRoot,
    logger: Logger
) async throws {
    // SNIPPET-BEGIN
    try await reloadable.follow(snapshots, makeRoot: makeRoot, shutdownTimeout: .seconds(10)) { outcome in
        switch outcome {
        case .success(let reload): logger.notice("Reloaded: \(reload.summary)")
        case .failure(let error): logger.error("Reload rejected: \(error)")
        }
    }
    // SNIPPET-END
}

func oneDatabasePerTenant() -> ScopeRoot {
    // SNIPPET-BEGIN
    let root = ScopeRoot(
        services: [SQLiteTenantDatabaseKey.self, SQLiteSessionKey.self],
        observers: [
            Tenancy(maximumOpen: 100, idleTimeout: .seconds(300)) { tenant, values in
                values.sqliteConfiguration = SQLiteConfiguration(path: "tenants/\(tenant).sqlite")
            }
        ]
    )
    // SNIPPET-END
    return root
}

/// What a framework's request looks like to the tenant snippet.
struct Request {
    var headers: [String: String]
}

struct HTTPError: Error {
    enum Status { case badRequest }
    init(_ status: Status, message: String) {}
}

func resolvingTheTenant(request: Request, tenantHeader: String) throws -> TenantID {
    // SNIPPET-BEGIN
    guard let tenant = TenantID(request.headers[tenantHeader] ?? "") else {
        throw HTTPError(.badRequest, message: "X-Tenant must be 1 to 63 characters from a-z, 0-9 and -")
    }
    // SNIPPET-END
    return tenant
}

/// What a framework's router and the example's ratings look like to the hand-off snippet.
struct StandInRouter {
    func post(_ path: String, _ handler: @escaping @Sendable (Request, Void) async throws -> String) {}
}

struct Rating: Sendable {}

enum CatalogEvent: Sendable {
    case rated(Rating)
}

final class CatalogEvents: Sendable {
    func publish(_ event: CatalogEvent) async {}
}

final class Ratings: Sendable {
    func rate(movieID: Int, stars: Int) async throws -> Rating { Rating() }
}

enum JSONResponse {
    enum Status { case created }
    static func make(_ rating: Rating, status: Status) throws -> String { "" }
}

func handingWorkOff(router: StandInRouter, ratings: Ratings, catalogEvents: CatalogEvents, id: Int, stars: Int) {
    // SNIPPET-BEGIN
    router.post("/movies/:id/ratings") { request, context in
        let rating = try await ratings.rate(movieID: id, stars: stars)
        handOff(timeout: .seconds(5)) {
            await catalogEvents.publish(.rated(rating))  // after the response, in its own scope
        }
        return try JSONResponse.make(rating, status: .created)
    }
    // SNIPPET-END
}

struct Cart: Sendable {}
struct Order: Sendable {}

struct Orders: Sendable {
    func place(_ cart: Cart) async throws -> Order { Order() }
}

struct OrderMailer: Sendable {
    func sendConfirmation(of order: Order) async throws {}
}

func handingWorkOffAfterTheCommit(orders: Orders, mailer: OrderMailer, cart: Cart) async throws {
    // SNIPPET-BEGIN
    let order = try await orders.place(cart)  // in the request's transaction
    handOff(.afterCommit, timeout: .seconds(10)) {
        try await mailer.sendConfirmation(of: order)  // only once the order is committed
    }
    // SNIPPET-END
}

func joiningAnOuterScope(root: ScopeRoot, next: (String) async throws -> String, request: String) async throws -> String
{
    // SNIPPET-BEGIN
    if ScopedValues.current.isInRequestScope(of: root) {
        return try await next(request)  // the outer adapter's scope
    }
    // SNIPPET-END
    return try await root.withScope { try await next(request + " in a new scope") }
}

// SNIPPET-BEGIN
struct ScopeMiddleware {
    let root: any ScopeRootSource
    func handle<R>(_ request: () async throws -> R) async throws -> R {
        try await root.current.withScope { try await request() }
    }
}
// SNIPPET-END

// MARK: What runs without a server

struct CoreSnippetTests {
    @Test func theContributedChecksAreBothRead() async throws {
        #expect(try await contributingHealthChecks() == 2)
    }

    @Test func theOverrideAndTheDetachedTaskSeeTheRequestsValues() async {
        #expect(overridingForOneCall() == "© Request")
        let audit = AuditLog()
        withScopedValues({ $0.copyright = "© Carried" }) {
            carryingValuesIntoDetachedWork(audit: audit)
        }
        #expect(await eventually(within: .seconds(5)) { audit.recorded.withLock { $0 } == ["© Carried"] })
    }

    @Test func aForgedRequestIDIsReplacedAndAValidOneKept() async throws {
        let root = ScopeRoot()
        let kept = applyingTheRequestIDRule(root: root, incomingHeader: "abc-123")
        #expect(try await kept.run { ScopedValues.current.requestID } == "abc-123")
        try await kept.close(.success)
        let replaced = applyingTheRequestIDRule(root: root, incomingHeader: "bad\" id")
        let id = try await replaced.run { ScopedValues.current.requestID }
        #expect(id != nil && id != "bad\" id")
        try await replaced.close(.success)
        await root.shutdown()
    }

    @Test func theTenantSnippetRefusesAnInvalidHeader() throws {
        #expect(
            try resolvingTheTenant(request: Request(headers: ["X-Tenant": "acme"]), tenantHeader: "X-Tenant").rawValue
                == "acme"
        )
        #expect(throws: HTTPError.self) {
            try resolvingTheTenant(request: Request(headers: ["X-Tenant": "ACME!"]), tenantHeader: "X-Tenant")
        }
    }

    @Test func anAdapterOnAScopeRootSourceOpensEachRequestOnTheRootCurrentThen() async throws {
        let first = ScopeRoot { $0.copyright = "© First" }
        #expect(first.current === first)
        let reloadable = ReloadableScopeRoot(first)
        let middleware = ScopeMiddleware(root: reloadable)
        #expect(try await middleware.handle { ScopedValues.current.copyright } == "© First")
        let second = ScopeRoot { $0.copyright = "© Second" }
        let replaced = reloadable.replace(with: second)
        #expect(replaced === first)
        #expect(try await middleware.handle { ScopedValues.current.copyright } == "© Second")
        #expect(try await ScopeMiddleware(root: first).handle { ScopedValues.current.copyright } == "© First")
        await first.shutdown()
        await second.shutdown()
    }

    @Test func anAdapterJoinsAScopeOfItsRootAndOpensOneOtherwise() async throws {
        let root = ScopeRoot()
        let other = ScopeRoot()
        let echo: (String) async throws -> String = { $0 }
        #expect(try await joiningAnOuterScope(root: root, next: echo, request: "r") == "r in a new scope")
        #expect(
            try await root.withScope { try await joiningAnOuterScope(root: root, next: echo, request: "r") } == "r"
        )
        #expect(
            try await other.withScope { try await joiningAnOuterScope(root: root, next: echo, request: "r") }
                == "r in a new scope"
        )
        #expect(!root.values.isInRequestScope(of: root))
        await root.shutdown()
        await other.shutdown()
    }
}

// MARK: Evicting a tenant

/// The suspended tenants a tenancy refuses: the stand-in for an application's registry.
final class SuspendedTenants: Sendable {
    private let suspended = Mutex<Set<TenantID>>([])
    func suspend(_ tenant: TenantID) { _ = suspended.withLock { $0.insert(tenant) } }
    func isSuspended(_ tenant: TenantID) -> Bool { suspended.withLock { $0.contains(tenant) } }
}

struct TenantEvictionSnippetTests {
    @Test func aSuspendedTenantIsEvictedAndItsNextScopeRefused() async throws {
        let registry = SuspendedTenants()
        let root = ScopeRoot(
            observers: [
                Tenancy { tenant, _ in
                    if registry.isSuspended(tenant) { throw CancellationError() }
                }
            ])
        let tenant = try #require(TenantID("acme"))
        try await root.withScope(tenant: tenant) {}
        #expect(root.tenantStatistics.open == 1)
        // SNIPPET-BEGIN
        registry.suspend(tenant)  // what your Tenancy.configure reads, so that it refuses the tenant
        await root.evictTenant(tenant)  // in-flight requests finish, then its services close
        // SNIPPET-END
        #expect(root.tenantStatistics == TenantStatistics(open: 0, evicted: 1))
        await #expect(throws: CancellationError.self) { try await root.withScope(tenant: tenant) {} }
        await root.shutdown()
    }

    @Test func aRootOpensTenantsWithATenancyAndRefusesThemWithout() async throws {
        // SNIPPET-BEGIN
        let root = ScopeRoot(observers: [Tenancy(maximumOpen: 100)])
        try await root.withScope(tenant: TenantID("acme")!) {
            #expect(ScopedValues.current.tenant == TenantID("acme"))
        }
        // SNIPPET-END
        #expect(root.tenantStatistics.open == 1)
        await root.shutdown()
        let withoutTenancy = ScopeRoot()
        await #expect(throws: ScopedError.noTenantProvider(tenant: TenantID("acme")!)) {
            try await withoutTenancy.withScope(tenant: TenantID("acme")!) {}
        }
        #expect(withoutTenancy.openScopeCount == 0)
        await withoutTenancy.shutdown()
    }
}

protocol HealthCheck: Sendable {}
struct ProcessCheck: HealthCheck {}
struct DatabaseCheck: HealthCheck {}

enum DatabaseCheckKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.app
    static func makeValue() async throws -> DatabaseCheck { DatabaseCheck() }
}

// SNIPPET-BEGIN
extension ScopedValues {
    @Entry var healthChecks: Contributions<any HealthCheck> = Contributions()
}
// SNIPPET-END

func contributingHealthChecks() async throws -> Int {
    // SNIPPET-BEGIN
    let root = ScopeRoot(services: [DatabaseCheckKey.self]) {
        $0.contribute(ProcessCheck(), to: \.healthChecks)
        $0.contribute(DatabaseCheckKey.self, to: \.healthChecks) { $0 }  // an app service
    }
    // SNIPPET-END
    defer { Task { await root.shutdown() } }
    return try await root.withScope { try await ScopedValues.current.healthChecks.elements().count }
}
