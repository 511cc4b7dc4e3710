import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import NIOPosix
import Scoped
import ScopedHummingbird
import ScopedSQLite
import ScopedServiceLifecycle
import ScopedTestSupport
import ScopedTesting
import Testing

// The application and its test that ScopedHummingbird's landing page shows, compiled and run.
// `articleShowsThisApplication` keeps the article's snippets identical to the code between the markers.

protocol NoteRepository: Sendable { func titles() async throws -> [String] }

struct SQLiteNoteRepository: NoteRepository {
    func titles() async throws -> [String] {
        try await ScopedValues.current.sqliteSession.query("SELECT title FROM notes ORDER BY id")
            .map { try $0.get("title") }
    }
}

struct MemoryNoteRepository: NoteRepository {
    var stored: [String]
    func titles() async throws -> [String] { stored }
}

extension ScopedValues {
    @Entry var noteRepository: any NoteRepository = SQLiteNoteRepository()
}

let noteMigrations = [
    SQLiteMigration(
        version: 1,
        name: "notes",
        statements: ["CREATE TABLE notes (id INTEGER PRIMARY KEY, title TEXT NOT NULL)"]
    )
]

// ARTICLE-APPLICATION-BEGIN
func buildApplication(databasePath: String, logger: Logger) -> some ApplicationProtocol {
    let root = ScopeRoot(services: [SQLiteDatabaseKey.self, SQLiteSessionKey.self]) {
        $0.sqliteConfiguration = SQLiteConfiguration(path: databasePath, migrations: noteMigrations)
    }
    let router = Router()
    router.add(middleware: RequestIDMiddleware())  // one request ID
    router.add(middleware: RequestScopeMiddleware(root: root))  // a scope per request
    router.get("/notes") { _, _ in
        try await ScopedValues.current.noteRepository.titles().joined(separator: "\n")
    }
    var app = Application(router: router, logger: logger)
    // Validates the root before the port binds; closes its services after the last request.
    app.addScopeRoot(ScopeRootService(root: root, logger: logger))
    return app
}
// ARTICLE-APPLICATION-END

// ARTICLE-APPLICATION-TEST-BEGIN
@Test(.scoped { $0.noteRepository = MemoryNoteRepository(stored: ["Buy milk"]) })
func listsTheNotes() async throws {
    let app = buildApplication(databasePath: "notes.sqlite", logger: Logger(label: "test"))
    try await app.test(.router) { client in
        let response = try await client.execute(uri: "/notes", method: .get)
        #expect(String(buffer: response.body) == "Buy milk")
    }
}
// ARTICLE-APPLICATION-TEST-END

// ARTICLE-EVENT-LOOP-BEGIN
func repositoryFromAnEventLoop(_ eventLoop: any EventLoop) async throws -> any NoteRepository {
    let values = ScopedValues.current  // in the request's task: its scope
    let read = eventLoop.submit {
        withScopedValues(values) { ScopedValues.current.noteRepository }  // the request's, again
    }
    return try await read.get()
}
// ARTICLE-EVENT-LOOP-END

// Testing.md's and expectRequestScopes' doc comment's.
// SNIPPET-BEGIN
@Test(.scoped { $0.noteRepository = MemoryNoteRepository(stored: ["Buy milk"]) })
func everyRequestRunsInARequestScope() async throws {
    let app = buildApplication(databasePath: "notes.sqlite", logger: Logger(label: "test"))
    try await app.test(.router) { client in
        try await expectRequestScopes {
            let response = try await client.execute(uri: "/notes", method: .get)
            #expect(String(buffer: response.body) == "Buy milk")
        }
    }
}
// SNIPPET-END

/// `expectRequestScopes` fails a test whose application opens no request scope, though the
/// handler still sees the test's mock (it runs in the test's own task).
struct RequestScopeExpectationTests {
    @Test(.scoped { $0.noteRepository = MemoryNoteRepository(stored: ["Buy milk"]) })
    func anApplicationWithoutTheMiddlewareFailsTheExpectation() async throws {
        let router = Router()
        router.get("/notes") { _, _ in try await ScopedValues.current.noteRepository.titles().joined() }
        let app = Application(router: router, logger: Logger(label: "test"))
        try await app.test(.router) { client in
            try await withKnownIssue {
                try await expectRequestScopes {
                    let response = try await client.execute(uri: "/notes", method: .get)
                    // The mock reaches the handler all the same: only the expectation tells.
                    #expect(String(buffer: response.body) == "Buy milk")
                }
            } matching: { issue in
                issue.comments.contains { $0.rawValue.contains("opened 0 request scopes") }
            }
        }
    }

    @Test func outsideATestScopeItSaysSo() async throws {
        await withKnownIssue {
            await expectRequestScopes {}
        } matching: { issue in
            issue.comments.contains { $0.rawValue.contains("runs in a test scope") }
        }
    }
}

/// The article's remedy for code a library runs on an event loop: without it the callback
/// reads the live repository, with it the test's mock.
struct EventLoopReadTests {
    @Test(.scoped { $0.noteRepository = MemoryNoteRepository(stored: ["Buy milk"]) })
    func aCallbackOnAnEventLoopReadsTheRequestsScopeOnlyWhenItIsBoundThere() async throws {
        let eventLoop = MultiThreadedEventLoopGroup.singleton.any()
        let unbound = try await eventLoop.submit { ScopedValues.current.noteRepository }.get()
        #expect(unbound is SQLiteNoteRepository)
        let bound = try await repositoryFromAnEventLoop(eventLoop)
        #expect(try await bound.titles() == ["Buy milk"])
    }
}

struct ReadmeApplicationExampleTests {
    private let warningsOnly = {
        var logger = Logger(label: "notes")
        logger.logLevel = .warning
        return logger
    }()

    @Test func servesFromTheDatabaseInProduction() async throws {
        let folder = try TemporaryFolder()
        let app = buildApplication(databasePath: folder.path("notes.sqlite"), logger: warningsOnly)
        try await app.test(.live) { client in
            let response = try await client.execute(uri: "/notes", method: .get)
            #expect(response.status == .ok)
            #expect(String(buffer: response.body) == "")
        }
        // Validation built the database before the port bound.
        #expect(FileManager.default.fileExists(atPath: folder.path("notes.sqlite")))
    }

    @Test(.scoped { $0.noteRepository = MemoryNoteRepository(stored: ["Buy milk"]) })
    func aTestThatReplacedTheRepositoryNeverOpensTheDatabase() async throws {
        let folder = try TemporaryFolder()
        let app = buildApplication(databasePath: folder.path("notes.sqlite"), logger: warningsOnly)
        try await app.test(.live) { client in
            let response = try await client.execute(uri: "/notes", method: .get)
            #expect(String(buffer: response.body) == "Buy milk")
        }
        #expect(!FileManager.default.fileExists(atPath: folder.path("notes.sqlite")))
    }

    @Test func articleShowsThisApplication() throws {
        let root = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let article = try String(
            contentsOf: root.appending(path: "Sources/ScopedHummingbird/ScopedHummingbird.docc/ScopedHummingbird.md"),
            encoding: .utf8
        )
        let source = try String(contentsOf: URL(filePath: #filePath), encoding: .utf8)
        for marker in ["ARTICLE-APPLICATION", "ARTICLE-APPLICATION-TEST", "ARTICLE-EVENT-LOOP"] {
            let begin = try #require(source.range(of: "// \(marker)-BEGIN\n"))
            let end = try #require(source.range(of: "// \(marker)-END"))
            let snippet = String(source[begin.upperBound..<end.lowerBound])
            #expect(
                article.contains("```swift\n" + snippet + "```"),
                "ScopedHummingbird.md must show \(marker) unchanged"
            )
        }
        #expect(
            try ArticleSnippets.inArticle("Sources/ScopedHummingbird/ScopedHummingbird.docc/ScopedHummingbird.md").count
                == 3
        )
        // Testing.md shows the same test.
        let testing = try String(
            contentsOf: root.appending(path: "Sources/Scoped/Scoped.docc/Testing.md"),
            encoding: .utf8
        )
        let begin = try #require(source.range(of: "// ARTICLE-APPLICATION-TEST-BEGIN\n"))
        let end = try #require(source.range(of: "// ARTICLE-APPLICATION-TEST-END"))
        #expect(testing.contains("```swift\n" + source[begin.upperBound..<end.lowerBound] + "```"))
        let requestScopes = try #require(try ArticleSnippets.marked().first { $0.contains("expectRequestScopes") })
        #expect(testing.contains("```swift\n" + requestScopes + "\n```"))
    }
}
