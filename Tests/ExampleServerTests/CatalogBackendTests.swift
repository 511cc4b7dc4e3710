import MovieCatalog
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Scoped
import ScopedPostgres
import ScopedSQLite
import ScopedServiceLifecycle
import ScopedTestSupport
import ScopedTesting
import Testing

@testable import CatalogApp

/// A repository that writes through the backend's repository and then fails, as a handler
/// failing after its write.
struct FailingAfterCreate: ForwardingRepository {
    struct Failure: Error {}
    let base: any MovieRepository

    func create(_ input: MovieInput) async throws -> Movie {
        _ = try await base.create(input)
        throw Failure()
    }
}

/// The HTTP contract is the same on SQLite and on PostgreSQL.
struct CatalogBackendTests {
    private func get(_ client: any TestClientProtocol, _ uri: String, headers: HTTPFields = [:]) async throws -> (
        HTTPResponse.Status, [String: Any]
    ) {
        try await client.execute(uri: uri, method: .get, headers: headers) { ($0.status, $0.object) }
    }

    @Test(arguments: Backend.available)
    func theCatalogAnswersTheSameRequestsWithTheSameResponses(backend: Backend) async throws {
        try await withCatalogServer(on: backend) { client, _, _ in
            let (_, page) = try await get(client, "/movies?limit=2")
            #expect(page["total"] as? Int == SampleCatalog.movies.count)
            #expect(
                (page["items"] as? [[String: Any]])?.map { $0["title"] as? String } == ["Toy Story", "Spirited Away"]
            )
            let created = try await client.execute(
                uri: "/movies",
                method: .post,
                headers: [.requestID: "contract-create"],
                body: json(#"{"title":"Up","year":2009,"director":"Pete Docter"}"#)
            ) { response in
                #expect(response.status == .created)
                #expect(response.headers[.location] == "/movies/\(SampleCatalog.movies.count + 1)")
                return try response.decode(Movie.self)
            }
            #expect(
                created == Movie(id: SampleCatalog.movies.count + 1, title: "Up", year: 2009, director: "Pete Docter")
            )
            try await client.execute(
                uri: "/movies/\(created.id)",
                method: .put,
                body: json(#"{"title":"Up","year":2009,"director":null}"#)
            ) { #expect($0.status == .ok) }
            try await client.execute(uri: "/movies/\(created.id)/ratings", method: .post, body: json(#"{"stars":4}"#)) {
                #expect($0.status == .created)
            }
            try await client.execute(uri: "/movies/\(created.id)/ratings", method: .post, body: json(#"{"stars":5}"#)) {
                #expect($0.status == .created)
                #expect($0.object["average"] as? Double == 4.5)
                #expect($0.object["count"] as? Int == 2)
            }
            try await client.execute(uri: "/movies/999999/ratings", method: .post, body: json(#"{"stars":5}"#)) {
                $0.expectError(.notFound, code: "not_found", field: nil)
            }
            try await client.execute(uri: "/movies", method: .post, body: json(#"{"title":"","year":2009}"#)) {
                $0.expectError(.unprocessableContent, code: "invalid_field", field: "title")
            }
            try await client.execute(uri: "/movies/\(created.id)", method: .delete) { #expect($0.status == .noContent) }
            try await client.execute(uri: "/movies/\(created.id)", method: .get) {
                $0.expectError(.notFound, code: "not_found", field: nil)
            }
            // The history, written after each response in a transaction of its own.
            #expect(
                try await eventually {
                    let (_, changes) = try await get(client, "/changes?movieID=\(created.id)")
                    return (changes["items"] as? [[String: Any]])?.map { $0["action"] as? String }
                        == ["created", "replaced", "deleted"]
                }
            )
            let (_, changes) = try await get(client, "/changes?movieID=\(created.id)")
            let first = (changes["items"] as? [[String: Any]])?.first
            #expect(first?["requestID"] as? String == "contract-create")
            #expect((first?["changedAt"] as? String)?.hasSuffix("Z") == true)
            // The request scope's session and the echo, on this backend.
            let (_, echo) = try await get(client, "/debug/echo", headers: [.requestID: "echo-1"])
            #expect(echo["database"] as? String == "echo-1")
        }
    }

    @Test(arguments: Backend.available)
    func aWriteWhoseRequestFailsIsRolledBack(backend: Backend) async throws {
        // Production: no seeding, which would create through the failing repository.
        let failing = FailingAfterCreate(base: backend.repository)
        try await withCatalogServer(on: backend, profile: .production, repository: failing) { client, _, _ in
            try await client.execute(uri: "/movies", method: .post, body: json(#"{"title":"Lost","year":2001}"#)) {
                $0.expectError(.internalServerError, code: "internal_error", field: nil)
            }
            let (_, page) = try await get(client, "/movies?limit=100")
            #expect(page["total"] as? Int == 0)
        }
    }

    @Test(arguments: Backend.available)
    func theOverrideRuleAppliesOnEitherBackendAndProductionIsLockedDown(backend: Backend) async throws {
        try await withCatalogServer(on: backend) { client, _, _ in
            let (_, fixture) = try await get(client, "/movies", headers: [.catalog: "fixture"])
            #expect(fixture["total"] as? Int == 3)
            let (_, own) = try await get(client, "/movies")
            #expect(own["total"] as? Int == SampleCatalog.movies.count)
        }
        try await withCatalogServer(on: backend, profile: .production) { client, _, _ in
            let (_, page) = try await get(client, "/movies", headers: [.catalog: "fixture"])
            #expect(page["total"] as? Int == 0)
            let (status, _) = try await get(client, "/debug/scope")
            #expect(status == .notFound)
        }
    }
}

/// Configuration of the PostgreSQL backend.
struct PostgresConfigurationLoadingTests {
    @Test func aPostgresDatabaseIsChosenByKindAndURLAndItsPasswordIsNeverShown() async throws {
        let folder = try TemporaryFolder()
        let configuration = try await loadConfiguration(
            .production,
            folder: folder,
            environment: ["DATABASE_KIND": "postgres", "DATABASE_URL": "postgres://catalog:s3cret@db:5432/catalog"]
        )
        #expect(configuration.databaseKind == .postgres)
        #expect(configuration.repositoryVariant == "postgres")
        #expect(configuration.postgres?.password == "s3cret")
        #expect("\(configuration.postgres!)" == "postgres://catalog:***@db:5432/catalog")
        let error = try await #require(throws: ConfigurationError.self) {
            try await loadConfiguration(
                .production,
                folder: folder,
                environment: ["DATABASE_KIND": "postgres", "DATABASE_URL": "postgres://catalog:s3cret@db:5432"]
            )
        }
        #expect(error.key == "database.url")
        #expect(error.source == "environment variable DATABASE_URL")
        #expect(!"\(error)".contains("s3cret"))
        let missing = try await #require(throws: ConfigurationError.self) {
            try await loadConfiguration(.production, folder: folder, environment: ["DATABASE_KIND": "postgres"])
        }
        #expect(missing.key == "database.url")
        let unknown = try await #require(throws: ConfigurationError.self) {
            try await loadConfiguration(.production, folder: folder, environment: ["DATABASE_KIND": "mysql"])
        }
        #expect(unknown.key == "database.kind")
    }
}
