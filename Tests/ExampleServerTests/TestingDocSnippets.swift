import MovieCatalog
import Scoped
import ScopedPostgres
import ScopedSQLite
import ScopedTestSupport
import ScopedTesting
import Testing

// The snippets of ScopedTesting's doc comments, verbatim between the markers (a `…` in a doc
// stands for the code here); `testFindsAMovie`, the XCTest one, is Testing.md's and is marked in
// TestingArticleTests.swift.

// SNIPPET-BEGIN
@Suite(.scoped { $0.movieRepository = InMemoryMovieRepository() })
struct CatalogTests {
    @Test(.scoped { $0.movieRepository = InMemoryMovieRepository.fixture() })
    func findsAMovie() async throws {
        // The test's trait is applied inside the suite's: the test wins.
        #expect(try await ScopedValues.current.movieRepository.movie(id: 1)?.title == "Toy Story")
    }
}
// SNIPPET-END

// SNIPPET-BEGIN
@Test(.scoped(tenant: TenantID("acme")!))
func seesOnlyItsOwnCatalog() async throws {
    #expect(ScopedValues.current.tenant == TenantID("acme"))
    #expect(ScopedValues.current.isTestScope)
}
// SNIPPET-END

/// A PostgreSQL configuration that names no running server: the tests below are compiled for
/// the doc comment and not run (PostgresTestDatabaseTests runs the trait on a real server).
private let configuration = try! PostgresConfiguration(url: "postgres://scoped@127.0.0.1:1/none")

@Suite(.disabled("compiled for ScopedTrait's doc comment; the trait's own tests run it"))
struct DatabaseTraitDocSnippets {
    // SNIPPET-BEGIN
    @Test(.scoped(database: .sqlite(migrations: SQLiteMovieRepository.migrations)))
    func ratingAMovieStoresIt() async throws {}

    @Test(.scoped(database: .postgres(configuration)))
    func ratingAMovieStoresItOnPostgres() async throws {}
    // SNIPPET-END
}
