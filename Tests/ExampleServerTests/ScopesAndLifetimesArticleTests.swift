import Foundation
import Hummingbird
import HummingbirdTesting
import HummingbirdWebSocket
import Logging
import MovieCatalog
import Scoped
import ScopedHummingbird
import ScopedDatabase
import ScopedDiagnostics
import ScopedHummingbirdWebSocket
import ScopedSQLite
import ScopedServiceLifecycle
import ScopedTestSupport
import ServiceLifecycle
import Synchronization
import Testing

@testable import CatalogApp

// The snippets of ScopesAndLifetimes.md (Scoped's DocC catalog), verbatim between the markers:
// they compile here, the tests below run them on a real SQLite file, and
// `scopesAndLifetimesArticleShowsTheseSnippets` checks that the article still shows them. The
// command-line snippet is the example server's own `pruneHistory`, checked against its source.

/// What the article's snippets refer to, around them.
struct ScopesAndLifetimesArticle {
    /// The settings the article's `buildApplication` reads.
    struct AppConfiguration {
        var database: SQLiteConfiguration
        var movieRepository: String
    }

    let variants = CatalogVariants.make()

    // SNIPPET-BEGIN
    func buildApplication(configuration: AppConfiguration, logger: Logger) throws -> some ApplicationProtocol {
        let root = try ScopeRoot(services: [SQLiteDatabaseKey.self, SQLiteSessionKey.self]) {
            $0.variants = variants
            $0.sqliteConfiguration = configuration.database
            try $0.selectVariant(configuration.movieRepository, of: "movieRepository")
        }
        let router = Router()
        router.add(middleware: RequestIDMiddleware())
        router.add(middleware: RequestScopeMiddleware(root: root))
        router.get("/movies/:id") { _, context in
            let id = try context.parameters.require("id", as: Int.self)
            return try await ScopedValues.current.movieRepository.movie(id: id)?.title ?? "not found"
        }
        var app = Application(router: router, logger: logger)
        app.addScopeRoot(ScopeRootService(root: root, logger: logger))  // validated before the port binds
        return app
    }
    // SNIPPET-END

    /// A request as a middleware sees it, for the request-scope snippet.
    struct IncomingRequest { var id: String }

    func handle(
        _ request: IncomingRequest,
        root: ScopeRoot,
        next: (IncomingRequest) async throws -> String?
    ) async throws -> String? {
        // SNIPPET-BEGIN
        try await root.withScope({ $0.requestID = request.id }) {
            try await next(request)
        }
        // SNIPPET-END
    }

    func create(
        _ input: MovieInput,
        movies: SQLiteMovieRepository,
        history: any MovieHistory
    ) async throws -> Response {
        // SNIPPET-BEGIN
        let movie = try await movies.create(input)
        handOff(.afterCommit, timeout: .seconds(10)) {
            try await history.record(.created, movieID: movie.id)  // its own transaction
        }
        return try JSONResponse.make(movie, status: .created)
        // SNIPPET-END
    }

    /// A job of the article's durable queue: a row of `jobs`.
    struct Job: Decodable, Sendable {
        let id: Int
        let movieID: Int
    }

    func createQueuingItsIndexing(_ input: MovieInput, movies: SQLiteMovieRepository) async throws -> Movie {
        // SNIPPET-BEGIN
        let movie = try await movies.create(input)
        // The job is a row on the request's own session: it commits or rolls back with the movie.
        _ = try await ScopedValues.current.sqliteSession.execute(
            "INSERT INTO jobs (kind, movie_id) VALUES ('index', \(movie.id))"
        )
        // SNIPPET-END
        return movie
    }

    // SNIPPET-BEGIN
    /// Runs the oldest job, if any, in a scope and a transaction of its own: the job's row is
    /// deleted in the transaction that did its work, so a crash before the commit runs it again.
    func runNextJob(on root: ScopeRoot, index: (Int) async throws -> Void) async throws -> Bool {
        try await root.withScope({ $0.transactionMode = .readWrite }) {
            let session = try await ScopedValues.current.sqliteSession
            let next = "SELECT id, movie_id AS movieID FROM jobs ORDER BY id LIMIT 1"
            guard let job = try await session.query(SQL(stringLiteral: next), as: Job.self).first else { return false }
            try await index(job.movieID)
            _ = try await session.execute("DELETE FROM jobs WHERE id = \(job.id)")
            return true
        }
    }
    // SNIPPET-END

    /// A check of the article's own, beside the example's.
    struct DiskSpaceCheck: HealthCheck {
        var name: String { "disk" }
        func check() async -> HealthReport.Check { .init(name: name, status: "ok", detail: "enough") }
    }

    func makeRootWithChecks(database: SQLiteConfiguration) -> ScopeRoot {
        // SNIPPET-BEGIN
        // Each part adds its check where the root is configured with it, knowing no other part.
        let root = ScopeRoot(services: [SQLiteDatabaseKey.self]) {
            $0.sqliteConfiguration = database
            $0.contribute(DatabaseHealthCheck(), to: \.healthChecks)
            $0.contribute(DiskSpaceCheck(), to: \.healthChecks)
        }
        // SNIPPET-END
        return root
    }

    func runChecks() async throws -> [HealthReport.Check] {
        // SNIPPET-BEGIN
        var checks: [HealthReport.Check] = []
        for check in try await ScopedValues.current.healthChecks.elements() {
            checks.append(await check.check())
        }
        // SNIPPET-END
        return checks
    }

    func rate(_ message: WebSocketMessage) async throws -> String { "rated" }
    func reply(to result: Result<String, any Error>) -> String { (try? result.get()) ?? "failed" }

    func addLiveRatings(to webSocketRouter: Router<BasicWebSocketRequestContext>, root: ScopeRoot) {
        // SNIPPET-BEGIN
        webSocketRouter.ws("/movies/live", root: root) { inbound, outbound, _ in
            try await inbound.forEachMessage(maxSize: 16 * 1024) { message in
                try await rate(message)  // in the message's scope and transaction
            } then: { result in
                try await outbound.write(.text(reply(to: result)))  // after the commit or rollback
            }
        }
        // SNIPPET-END
    }

    // SNIPPET-BEGIN
    struct HistoryPruningJob: Service {
        let root: ScopeRoot
        var interval: Duration = .seconds(3600)
        let retention: Duration
        let logger: Logger

        func run() async throws {
            await cancelWhenGracefulShutdown {
                while !Task.isCancelled {
                    do {
                        let deleted = try await runOnce()
                        if deleted > 0 { logger.info("Pruned \(deleted) history entries") }
                    } catch {
                        logger.warning("Pruning the history failed: \(error)")
                    }
                    try? await Task.sleep(for: interval)
                }
            }
        }

        /// One run, in its own scope and write transaction.
        func runOnce() async throws -> Int {
            try await root.withScope({ $0.transactionMode = .readWrite }) {
                try await ScopedValues.current.movieHistory.prune(olderThan: retention)
            }
        }
    }
    // SNIPPET-END

    /// Validates `root` as a server without service-lifecycle would, before it binds its port.
    func validateOrExit(_ root: ScopeRoot, logger: Logger) async {
        // SNIPPET-BEGIN
        let problems = await root.validate(scope: { $0.requestID = "validation" })
        guard problems.isEmpty else {
            for problem in problems { logger.critical("\(problem)") }
            exit(1)
        }
        // SNIPPET-END
    }

    func logBuilds(of root: ScopeRoot, logger: Logger) {
        // SNIPPET-BEGIN
        for (name, duration) in root.dependencyGraph()?.appServiceBuilds ?? [] {
            logger.notice("Built app service \(name) in \(duration)")
        }
        // SNIPPET-END
    }
}

/// A session of the article's own: what it did when its scope closed.
final class Session: Sendable {
    enum Ending: Equatable { case open, committed, rolledBack }

    let database: SQLiteDatabase
    private let state = Mutex(Ending.open)

    init(database: SQLiteDatabase) { self.database = database }

    var ending: Ending { state.withLock { $0 } }
    func commit() async throws { state.withLock { $0 = .committed } }
    func rollback() async throws { state.withLock { $0 = .rolledBack } }
}

// SNIPPET-BEGIN
enum SessionKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.scope
    static func makeValue() async throws -> Session {
        Session(database: try await ScopedValues.current.sqliteDatabase)
    }
    static func close(_ session: Session, outcome: ScopeOutcome) async throws {
        if outcome.isSuccess { try await session.commit() } else { try await session.rollback() }
    }
}

extension ScopedValues {
    var session: Session { get async throws { try await service(SessionKey.self) } }
}
// SNIPPET-END

struct ScopesAndLifetimesArticleTests {
    let article = ScopesAndLifetimesArticle()
    let folder: TemporaryFolder
    let database: SQLiteConfiguration

    init() throws {
        folder = try TemporaryFolder(prefix: "scopes-article")
        database = SQLiteConfiguration(
            path: folder.path("catalog.sqlite"),
            migrations: SQLiteMovieRepository.migrations
        )
    }

    private func makeRoot() -> ScopeRoot {
        ScopeRoot(services: [SQLiteSessionKey.self], observers: [DependencyGraphRecorder()]) {
            [database] in $0.sqliteConfiguration = database
        }
    }

    @Test func theApplicationServesFromItsRoot() async throws {
        let configuration = ScopesAndLifetimesArticle.AppConfiguration(database: database, movieRepository: "sqlite")
        let app = try article.buildApplication(configuration: configuration, logger: Logger(label: "test"))
        try await app.test(.live) { client in
            let response = try await client.execute(uri: "/movies/1", method: .get)
            #expect(String(buffer: response.body) == "not found")
        }
    }

    @Test func aRequestScopeHoldsTheRequestsID() async throws {
        let root = makeRoot()
        let seen = try await article.handle(.init(id: "req-7"), root: root) { _ in ScopedValues.current.requestID }
        #expect(seen == "req-7")
        try await root.shutdown()
    }

    @Test func handedOffWorkCommitsItsOwnTransaction() async throws {
        let root = makeRoot()
        let history = SQLiteMovieHistory()
        let created = try await root.withScope {
            try await article.create(
                MovieInput(title: "Up", year: 2009, director: "Pete Docter"),
                movies: SQLiteMovieRepository(),
                history: history
            )
        }
        #expect(created.status == .created)
        try await root.shutdown()  // waits for the handed-off work
        let reopened = makeRoot()
        let changes = try await reopened.withScope { try await history.changes(movieID: 1) }
        #expect(changes.map(\.action) == [.created])
        try await reopened.shutdown()
    }

    @Test func aQueuedJobCommitsWithItsRequestAndRunsUntilItSucceeds() async throws {
        let root = makeRoot()
        try await root.withScope({ $0.transactionMode = .readWrite }) {
            _ = try await ScopedValues.current.sqliteSession.execute(
                "CREATE TABLE jobs (id INTEGER PRIMARY KEY, kind TEXT NOT NULL, movie_id INTEGER NOT NULL)"
            )
        }
        let input = MovieInput(title: "Up", year: 2009, director: "Pete Docter")
        // A request that fails after queuing its job: the job rolls back with the movie.
        struct Refused: Error {}
        await #expect(throws: Refused.self) {
            try await root.withScope({ $0.transactionMode = .readWrite }) {
                _ = try await article.createQueuingItsIndexing(input, movies: SQLiteMovieRepository())
                throw Refused()
            }
        }
        let movie = try await root.withScope({ $0.transactionMode = .readWrite }) {
            try await article.createQueuingItsIndexing(input, movies: SQLiteMovieRepository())
        }
        // The first attempt fails: its job stays for the next; the second succeeds and removes it.
        let indexed = Recorder<Int>()
        await #expect(throws: Refused.self) {
            _ = try await article.runNextJob(on: root) { _ in throw Refused() }
        }
        #expect(try await article.runNextJob(on: root) { indexed.record($0) })
        #expect(try await article.runNextJob(on: root) { indexed.record($0) } == false)
        #expect(indexed.all == [movie.id])
        try await root.shutdown()
    }

    @Test func theContributedChecksRunInTheOrderContributedPlusAScopesOwn() async throws {
        let root = article.makeRootWithChecks(database: database)
        let (atRoot, inScope) = try await root.withScope {
            let atRoot = try await article.runChecks()
            let inScope = try await withScopedValues({
                $0.contribute(ScopesAndLifetimesArticle.DiskSpaceCheck(), to: \.healthChecks)
            }) { try await article.runChecks() }
            return (atRoot, inScope)
        }
        #expect(atRoot.map(\.name) == ["database", "disk"])
        #expect(atRoot.map(\.status) == ["ok", "ok"])
        #expect(inScope.map(\.name) == ["database", "disk", "disk"])
        try await root.shutdown()
    }

    @Test func theJobPrunesInItsOwnScope() async throws {
        let root = makeRoot()
        let history = SQLiteMovieHistory()
        try await root.withScope { try await history.record(.created, movieID: 1) }
        try await Task.sleep(for: .milliseconds(5))
        let job = ScopesAndLifetimesArticle.HistoryPruningJob(
            root: root,
            retention: .zero,
            logger: Logger(label: "job")
        )
        #expect(try await job.runOnce() == 1)
        try await root.shutdown()
    }

    @Test func theSessionCommitsOnSuccessAndRollsBackOnFailure() async throws {
        let root = makeRoot()
        let committed = try await root.withScope { try await ScopedValues.current.session }
        #expect(committed.ending == .committed)
        struct Refused: Error {}
        let rolledBack = Mutex<Session?>(nil)
        await #expect(throws: Refused.self) {
            try await root.withScope {
                let session = try await ScopedValues.current.session
                rolledBack.withLock { $0 = session }
                throw Refused()
            }
        }
        #expect(rolledBack.withLock { $0?.ending } == .rolledBack)
        try await root.shutdown()
    }

    @Test func validationPassesAndTheBuildsAreListed() async throws {
        let root = makeRoot()
        await article.validateOrExit(root, logger: Logger(label: "test"))  // returns: no problem
        #expect(try #require(root.dependencyGraph()).appServiceBuilds.map(\.0) == ["sqliteDatabase"])
        article.logBuilds(of: root, logger: Logger(label: "test"))
        try await root.shutdown()
    }

    @Test func scopesAndLifetimesArticleShowsTheseSnippets() throws {
        let article = try ArticleSnippets.inArticle("Sources/Scoped/Scoped.docc/ScopesAndLifetimes.md")
        let snippets = try ArticleSnippets.marked()
        #expect(snippets.count == 12)
        for snippet in snippets { #expect(article.contains(snippet), "\(snippet)") }

        // The command-line snippet is the example server's own command.
        let server = try String(
            contentsOf: ArticleSnippets.repositoryRoot(from: #filePath)
                .appending(path: "Sources/CatalogApp/CatalogServer.swift"),
            encoding: .utf8
        )
        let command = try #require(article.first { $0.hasPrefix("static func pruneHistory") })
        let indented = command.split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.isEmpty ? "" : "    " + $0 }.joined(separator: "\n")
        #expect(server.contains(indented.replacingOccurrences(of: "    static func", with: "    package static func")))
        #expect(article.count == snippets.count + 1)
    }
}
