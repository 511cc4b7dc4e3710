import PostgresNIO
import Scoped
import ScopedPostgres
import ScopedTestSupport
import ScopedTesting
import Testing

// The snippets of ScopedPostgres' doc comments, verbatim between the markers (a `…` in a doc
// stands for the code here), with stand-ins for what they assume.

/// The catalog's migrations, as the configuration's example names them.
private enum CatalogMigrations {
    static let all = itemMigrations
}

@Suite(postgresAvailable)
struct PostgresDocSnippets {
    @Test func aConfigurationFromAURL() throws {
        // SNIPPET-BEGIN
        let configuration = try PostgresConfiguration(
            url: "postgres://catalog:secret@db.internal:5432/catalog",
            migrations: CatalogMigrations.all
        )
        // SNIPPET-END
        #expect(configuration.migrations.map(\.version) == [1])
    }

    @Test func aSessionsQueriesReadTheScopesTransaction() async throws {
        let fixture = try await PostgresFixture()
        try await fixture.withRoot { root in
            try await root.withScope {
                let session = try await ScopedValues.current.postgresSession
                try await session.execute("CREATE TABLE movies (id integer PRIMARY KEY, title text NOT NULL)")
                try await session.execute("INSERT INTO movies VALUES (1, 'Heat'), (2, 'Alien')")
            }
            let id = 2
            let found = try await root.withScope {
                // SNIPPET-BEGIN
                let session = try await ScopedValues.current.postgresSession
                let rows = try await session.query("SELECT id, title FROM movies WHERE id = \(id)")
                // SNIPPET-END
                return try rows.map { try $0.decode((Int, String).self) }
            }
            #expect(found.map(\.1) == ["Alien"])
            let counted = try await root.withScope {
                let session = try await ScopedValues.current.postgresSession
                // SNIPPET-BEGIN
                let total = try await session.query("SELECT id, title FROM movies") { rows in
                    var count = 0
                    for try await (id, title) in rows.decode((Int, String).self) { count += 1 }
                    return count
                }
                // SNIPPET-END
                return total
            }
            #expect(counted == 2)
        }
    }

    @Test func aPreparedStatementIsQueriedWithItsValues() async throws {
        let fixture = try await PostgresFixture()
        try await fixture.withRoot { root in
            try await root.withScope {
                try await ScopedValues.current.postgresSession.execute("INSERT INTO items (name) VALUES ('Heat')")
            }
            let found = try await root.withScope {
                let session = try await ScopedValues.current.postgresSession
                // SNIPPET-BEGIN
                struct ItemName: PostgresPreparedStatement {
                    static let sql = "SELECT name FROM items WHERE id = $1"
                    typealias Row = String
                    var id: Int
                    func makeBindings() -> PostgresBindings {
                        var bindings = PostgresBindings()
                        bindings.append(id)
                        return bindings
                    }
                    func decodeRow(_ row: PostgresRow) throws -> String { try row.decode(String.self) }
                }
                let names = try await session.query(ItemName(id: 1))
                // SNIPPET-END
                return names
            }
            #expect(found == ["Heat"])
        }
    }
}

/// Names no running server: the test below is compiled for PostgresTestDatabase's doc comment
/// and not run (PostgresTestDatabaseTests runs the trait on a real server).
private let configuration = try! PostgresConfiguration(
    url: "postgres://scoped@127.0.0.1:1/none",
    migrations: CatalogMigrations.all
)

@Suite(.disabled("compiled for PostgresTestDatabase's doc comment; PostgresTestDatabaseTests runs the trait"))
struct PostgresTraitDocSnippets {
    // SNIPPET-BEGIN
    @Test(.scoped(database: .postgres(configuration)))
    func ratingAMovieStoresIt() async throws {}
    // SNIPPET-END
}
