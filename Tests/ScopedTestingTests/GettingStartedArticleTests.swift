import Scoped
import ScopedTestSupport
import Synchronization
import Testing

// The snippets of GettingStarted.md (Scoped's DocC catalog), verbatim between the markers, with
// stand-ins for the types the article assumes: they compile here, and run.

struct Movie: Sendable, Equatable {
    let id: Int
    let title: String
}

protocol MovieRepository: Sendable {
    func movie(id: Int) async throws -> Movie?
}

struct SQLiteMovieRepository: MovieRepository {
    func movie(id: Int) async throws -> Movie? { Movie(id: id, title: "from SQLite") }
}

struct InMemoryMovieRepository: MovieRepository {
    func movie(id: Int) async throws -> Movie? { Movie(id: id, title: "from memory") }
}

struct Theme: Sendable {
    var cornerRadius = 8.0
}

extension ScopedValues {
    @Entry var theme: Theme = Theme()
}

final class Library: Sendable {
    let name: String
    init(name: String) { self.name = name }
}

final class AuditSink: Sendable {
    static let standardError = AuditSink()
    private let events = Mutex<[String]>([])
    func record(_ event: String) { events.withLock { $0.append(event) } }
    var recorded: [String] { events.withLock { $0 } }
}

// SNIPPET-BEGIN
extension ScopedValues {
    @Entry var movieRepository: any MovieRepository = SQLiteMovieRepository()
    @Entry var tenantID: String?
}
// SNIPPET-END

// SNIPPET-BEGIN
private struct ThemeColorKey: ScopedKey {
    static let defaultValue = "blue"
}

extension ScopedValues {
    var themeColor: String {
        get { self[ThemeColorKey.self] }
        set { self[ThemeColorKey.self] = newValue }
    }
}
// SNIPPET-END

// SNIPPET-BEGIN
struct MovieDetails {
    @Scoped(\.movieRepository) var movies
    @Scoped(\.theme.cornerRadius) var radius  // a key path into an entry

    func show(id: Int) async throws -> Movie? {
        try await movies.movie(id: id)
    }
}

let tenant = ScopedValues.current.tenantID
// SNIPPET-END

// SNIPPET-BEGIN
struct Shelf {
    @Scoped(Library.self) var branch  // Library?

    func library() throws -> Library {
        try ScopedValues.current.require(Library.self)
    }
}
// SNIPPET-END

// SNIPPET-BEGIN
struct AuditAction: Sendable {
    let sink: AuditSink
    func callAsFunction(_ event: String) { sink.record(event) }
}

extension ScopedValues {
    @Entry var audit: AuditAction = AuditAction(sink: .standardError)
}
// SNIPPET-END

struct GettingStartedArticleTests {
    @Test func anOverrideReachesTheSubtreeOfCallsAndNothingElse() async throws {
        // SNIPPET-BEGIN
        let controller = MovieDetails()
        try await withScopedValues({ $0.movieRepository = InMemoryMovieRepository() }) {
            try await controller.show(id: 1)  // reads the in-memory repository
        }
        // Here, and in every sibling task, the default is read again.
        // SNIPPET-END
        let inside = try await withScopedValues({ $0.movieRepository = InMemoryMovieRepository() }) {
            try await controller.show(id: 1)
        }
        #expect(inside?.title == "from memory")
        #expect(try await controller.show(id: 1)?.title == "from SQLite")
        #expect(controller.radius == 8)
        #expect(tenant == nil)
    }

    @Test func anObjectIsReadByItsTypeAndAMissingOneThrowsInsteadOfTrapping() throws {
        let library = Library(name: "central")
        let shelf = withScopedValues({ $0.set(library) }) { Shelf() }
        let required = try withScopedValues({ $0.set(library) }) {
            #expect(shelf.branch === library)
            return try shelf.library()
        }
        #expect(required === library)
        #expect(shelf.branch == nil)
        #expect(throws: ScopedError.missingObject(type: String(reflecting: Library.self))) { try shelf.library() }
    }

    @Test func anActionIsCalledLikeAFunctionAndEscapingWorkCarriesItsScope() async throws {
        let sink = AuditSink()
        withScopedValues({ $0.audit = AuditAction(sink: sink) }) {
            // SNIPPET-BEGIN
            @Scoped(\.audit) var audit
            audit("movie created")
            // SNIPPET-END
            // SNIPPET-BEGIN
            let values = ScopedValues.current
            Task.detached {
                withScopedValues(values) {
                    ScopedValues.current.audit("detached work done")  // the captured scope's audit
                }
            }
            // SNIPPET-END
        }
        #expect(await eventually { sink.recorded.count == 2 })
        #expect(sink.recorded == ["movie created", "detached work done"])
    }

    @Test func anEntryDeclaredWithoutTheMacroIsReadAndOverriddenAsAnyOther() {
        #expect(ScopedValues.current.themeColor == "blue")
        let (inside, names) = withScopedValues({ $0.themeColor = "red" }) {
            (ScopedValues.current.themeColor, ScopedValues.current.storedEntries.map(\.name))
        }
        #expect(inside == "red")
        #expect(names.contains("themeColor"))
    }

    @Test func everySnippetOfTheArticleIsHere() throws {
        let article = try ArticleSnippets.inArticle("Sources/Scoped/Scoped.docc/GettingStarted.md")
        // In the file's order, which Swift's rules for declarations and statements decide.
        #expect(article.sorted() == (try ArticleSnippets.marked()).sorted())
    }
}
