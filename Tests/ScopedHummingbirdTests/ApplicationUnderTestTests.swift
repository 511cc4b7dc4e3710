import Hummingbird
import HummingbirdTesting
import Logging
import Scoped
import ScopedHummingbird
import ScopedServiceLifecycle
import ScopedTestSupport
import ScopedTesting
import ServiceLifecycle
import Synchronization
import Testing

// An application written as a Hummingbird user writes one, knowing nothing of its tests: a
// protocol-typed repository whose live implementation reads an app service (its "database"),
// a root built inside `buildApplication`, and the root's life given to the application.

protocol TodoRepository: Sendable {
    func titles() async throws -> [String]
}

/// The live repository: reads the database service on each call.
struct LiveTodoRepository: TodoRepository {
    func titles() async throws -> [String] {
        _ = try await ScopedValues.current.service(TodoDatabaseKey.self)
        return ["from the database"]
    }
}

/// The test double.
struct MemoryTodoRepository: TodoRepository {
    var stored: [String]
    func titles() async throws -> [String] { stored }
}

/// Where the application's database records each connection it makes; a test reads it.
final class ConnectionLog: Sendable {
    private let count = Atomic(0)
    func connected() { count.add(1, ordering: .relaxed) }
    var connections: Int { count.load(ordering: .relaxed) }
}

extension ScopedValues {
    @Entry var todoRepository: any TodoRepository = LiveTodoRepository()
    /// A live-only entry: tests must override it.
    @Entry(testValue: MemoryTodoRepository(stored: ["stand-in"]))
    var auditedTodoRepository: any TodoRepository = LiveTodoRepository()
    @Entry var connectionLog: ConnectionLog = ConnectionLog()
}

/// The application's database: connects when it is built.
enum TodoDatabaseKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.app
    static func makeValue() async throws -> ConnectionLog {
        let log = ScopedValues.current.connectionLog
        log.connected()
        return log
    }
}

/// The user's `buildApplication`: nothing in it knows about tests.
func buildTodoApplication(
    handedOff: Signal = Signal()
) -> (application: Application<RouterResponder<BasicRequestContext>>, root: ScopeRoot) {
    let root = ScopeRoot(services: [TodoDatabaseKey.self])
    let router = Router()
    router.add(middleware: RequestScopeMiddleware(root: root))
    router.get("/todos") { _, _ in
        try await ScopedValues.current.todoRepository.titles().joined(separator: ",")
    }
    router.get("/audited") { _, _ in
        try await ScopedValues.current.auditedTodoRepository.titles().joined(separator: ",")
    }
    router.get("/audited-later") { _, _ in
        handOff(timeout: .seconds(5)) {
            _ = try await ScopedValues.current.auditedTodoRepository.titles()
            handedOff.fire()
        }
        return "accepted"
    }
    var logger = Logger(label: "todos")
    logger.logLevel = .warning
    var application = Application(
        router: router,
        configuration: .init(address: .hostname("127.0.0.1", port: 0)),
        logger: logger
    )
    application.addScopeRoot(ScopeRootService(root: root, logger: logger))
    return (application, root)
}

/// Hummingbird's two ways of testing an application.
enum TestMode: String, CaseIterable, CustomTestStringConvertible {
    case router, live
    var setup: TestingSetup { self == .router ? .router : .live }
    var testDescription: String { rawValue }
}

/// Each test gets its own connection log, so counts never mix across parallel tests.
@Suite(.scoped { $0.connectionLog = ConnectionLog() })
struct ApplicationUnderTestTests {
    @Test(
        .scoped { $0.todoRepository = MemoryTodoRepository(stored: ["write the tests"]) },
        arguments: TestMode.allCases
    )
    func testOverridesReachRequestScopesOfARootTheAppBuilds(mode: TestMode) async throws {
        let (application, root) = buildTodoApplication()
        try await application.test(mode.setup) { client in
            let response = try await client.execute(uri: "/todos", method: .get)
            #expect(String(buffer: response.body) == "write the tests")
        }
        await root.shutdown()
    }

    @Test(.scoped { $0.todoRepository = MemoryTodoRepository(stored: ["first"]) }, arguments: 0..<8)
    func parallelTestsThroughTheRouterSeeOnlyTheirOwnOverrides(_ round: Int) async throws {
        try await withScopedValues({ $0.todoRepository = MemoryTodoRepository(stored: ["round \(round)"]) }) {
            let (application, root) = buildTodoApplication()
            try await application.test(.router) { client in
                let response = try await client.execute(uri: "/todos", method: .get)
                #expect(String(buffer: response.body) == "round \(round)")
            }
            await root.shutdown()
        }
    }

    @Test(.scoped())
    func aLiveOnlyEntryReadByARequestFailsTheTest() async throws {
        let (application, root) = buildTodoApplication()
        try await withKnownIssue {
            try await application.test(.router) { client in
                let response = try await client.execute(uri: "/audited", method: .get)
                // The stand-in answered: the live default was never built.
                #expect(String(buffer: response.body) == "stand-in")
            }
        } matching: { issue in
            issue.comments.contains { $0.rawValue.contains("'auditedTodoRepository' is live-only") }
        }
        #expect(ScopedValues.current.connectionLog.connections == 0)
        await root.shutdown()
    }

    @Test(.scoped())
    func aLiveOnlyEntryReadByHandedOffWorkFailsTheTest() async throws {
        let handedOff = Signal()
        let (application, root) = buildTodoApplication(handedOff: handedOff)
        try await withKnownIssue {
            try await application.test(.live) { client in
                let response = try await client.execute(uri: "/audited-later", method: .get)
                #expect(String(buffer: response.body) == "accepted")
                await handedOff.wait()
            }
        } matching: { issue in
            issue.comments.contains { $0.rawValue.contains("'auditedTodoRepository' is live-only") }
        }
        await root.shutdown()
    }

    @Test(.scoped())
    func aLiveOnlyEntryReadByAJobOnTheRootFailsTheTest() async throws {
        let (_, root) = buildTodoApplication()
        try await withKnownIssue {
            // A job runs its unit of work in a scope of the root.
            let titles = try await root.withScope { try await ScopedValues.current.auditedTodoRepository.titles() }
            #expect(titles == ["stand-in"])
        } matching: { issue in
            issue.comments.contains { $0.rawValue.contains("'auditedTodoRepository' is live-only") }
        }
        await root.shutdown()
    }

    @Test(.scoped { $0.todoRepository = MemoryTodoRepository(stored: ["no database"]) })
    func validatingInATestDoesNotBuildWhatTheOverridesLeaveUnread() async throws {
        let (application, root) = buildTodoApplication()
        // `.live` runs the application's services: the root service validates before serving.
        try await application.test(.live) { client in
            let response = try await client.execute(uri: "/todos", method: .get)
            #expect(String(buffer: response.body) == "no database")
        }
        #expect(ScopedValues.current.connectionLog.connections == 0)
        await root.shutdown()
    }

    @Test(.scoped { $0.todoRepository = MemoryTodoRepository(stored: ["overridden"]) })
    func aRootCanChooseToStartFromDefaultsInATest() async throws {
        let root = ScopeRoot(startingFrom: ScopedValues()) { _ in }
        let titles = try await root.withScope { try await ScopedValues.current.todoRepository.titles() }
        #expect(titles == ["from the database"])
        await root.shutdown()
    }
}

/// Outside any test scope, as an application starts in production.
struct ProductionRootTests {
    @Test func aProductionRootBuiltOutsideAnyScopeStartsFromDefaults() async throws {
        let root = withScopedValues({ $0.todoRepository = MemoryTodoRepository(stored: ["not a test"]) }) {
            ScopeRoot()
        }
        let titles = try await root.withScope { try await ScopedValues.current.todoRepository.titles() }
        #expect(titles == ["from the database"])
        await root.shutdown()
    }
}
