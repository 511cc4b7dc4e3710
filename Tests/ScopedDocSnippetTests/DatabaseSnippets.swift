import Scoped
import ScopedDatabase
import ScopedSQLite
import ScopedTenants
import ScopedTesting
import Synchronization
import Testing

// The snippets of ScopedDatabase's and ScopedSQLite's doc comments, verbatim between the
// markers (a `…` in a doc stands for the code here), with stand-ins for what they assume.

extension SQLiteMovieRepository {
    static let migrations = [
        SQLiteMigration(
            version: 1,
            name: "movies",
            statements: ["CREATE TABLE movies (id INTEGER PRIMARY KEY, title TEXT NOT NULL)"]
        )
    ]
}

/// What a framework's request looks like to the transaction-mode snippet.
struct MethodRequest: Sendable {
    enum Method { case get, post }
    var method: Method
}

func choosingTheTransactionMode(
    root: ScopeRoot,
    request: MethodRequest,
    handle: (MethodRequest) async throws -> Void
) async throws {
    // SNIPPET-BEGIN
    try await root.withScope({ $0.transactionMode = request.method == .get ? .readOnly : .readWrite }) {
        try await handle(request)
    }
    // SNIPPET-END
}

func bindingAValue() -> SQL {
    // SNIPPET-BEGIN
    let title = "Toy Story'); DROP TABLE movies; --"
    let sql: SQL = "SELECT id FROM movies WHERE title = \(title)"
    sql.text  // "SELECT id FROM movies WHERE title = ?"
    sql.bindings  // [.text("Toy Story'); DROP TABLE movies; --")]
    // SNIPPET-END
    return sql
}

func aFileForEachTenant() -> Tenancy {
    // SNIPPET-BEGIN
    Tenancy(maximumOpen: 100) { tenant, values in
        values.sqliteConfiguration?.path = "tenants/\(tenant).sqlite"
    }
    // SNIPPET-END
}

// SNIPPET-BEGIN
@Test(.scoped(database: .sqlite(migrations: SQLiteMovieRepository.migrations)))
func ratingAMovieStoresIt() async throws {
    let root = ScopeRoot(services: [SQLiteDatabaseKey.self, SQLiteSessionKey.self]) { _ in }
    try await root.withScope {
        try await ScopedValues.current.sqliteSession.execute("INSERT INTO movies (title) VALUES (\("Up"))")
    }
    let titles = try await root.withScope {
        try await ScopedValues.current.sqliteSession.query("SELECT title FROM movies")
            .map {
                try $0.get("title", as: String.self)
            }
    }
    #expect(titles == ["Up"])
    await root.shutdown()
}
// SNIPPET-END

struct DatabaseSnippetTests {
    @Test func theModeFollowsTheMethod() async throws {
        let root = ScopeRoot()
        let modes = Recorded()
        for method in [MethodRequest.Method.get, .post] {
            try await choosingTheTransactionMode(root: root, request: MethodRequest(method: method)) { _ in
                modes.append(ScopedValues.current.transactionMode)
            }
        }
        #expect(modes.all == [.readOnly, .readWrite])
        await root.shutdown()
    }

    @Test func aValueIsBoundNotSpliced() {
        let sql = bindingAValue()
        #expect(sql.text == "SELECT id FROM movies WHERE title = ?")
        #expect(sql.bindings == [.text("Toy Story'); DROP TABLE movies; --")])
    }
}

/// The modes the transaction-mode snippet's handler saw.
final class Recorded: Sendable {
    private let modes = Mutex<[TransactionMode]>([])
    func append(_ mode: TransactionMode) { modes.withLock { $0.append(mode) } }
    var all: [TransactionMode] { modes.withLock { $0 } }
}
