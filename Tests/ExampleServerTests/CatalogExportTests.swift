import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import MovieCatalog
import Scoped
import ScopedTestSupport
import Testing

@testable import CatalogApp

/// The backend's repository, holding the export mid-stream: the first read of a batch after
/// `heldAfter` fires `held` and waits for `release`.
struct HoldingRepository: ForwardingRepository {
    let base: any MovieRepository
    let heldAfter: Int
    let held = Signal()
    let release = Signal()

    func movies(after id: Int, limit: Int) async throws -> [Movie] {
        if id >= heldAfter, !held.hasFired {
            held.fire()
            await release.wait()
        }
        return try await base.movies(after: id, limit: limit)
    }
}

/// `GET /movies/export`: the catalog streamed as NDJSON from one snapshot, on the real server,
/// on either backend.
struct CatalogExportTests {
    /// Adds `count` movies to the sample catalog, from outside the server.
    private func addMovies(_ count: Int, to database: TestDatabase) async throws {
        try await database.execute(
            """
            WITH RECURSIVE numbers(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM numbers WHERE n < \(count))
            INSERT INTO movies (title, year, director) SELECT 'Movie ' || n, 1900 + n % 120, NULL FROM numbers
            """
        )
    }

    private func statistics(_ client: some TestClientProtocol) async throws -> ServerStatistics {
        try await client.execute(uri: "/debug/stats", method: .get) { try $0.decode(ServerStatistics.self) }
    }

    /// The server's statistics once no other scope is open and no connection is leased, or
    /// as they are after a second.
    private func settledStatistics(_ client: some TestClientProtocol) async throws -> ServerStatistics {
        var stats = try await statistics(client)
        _ = try await eventually(within: .seconds(1)) {
            stats = try await statistics(client)
            return stats.otherOpenScopes == 0 && stats.database?.leased == 0
        }
        return stats
    }

    private static let exportRequest = "GET /movies/export HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n"

    @Test(arguments: Backend.available)
    func theExportIsOneSnapshotEvenWhileOtherRequestsWrite(backend: Backend) async throws {
        let repository = HoldingRepository(base: backend.repository, heldAfter: 2000)
        try await withCatalogServer(on: backend, repository: repository) { client, _, database in
            try await addMovies(10_000, to: database)
            let snapshot = try await database.integers("SELECT id FROM movies ORDER BY id")
            #expect(snapshot.count == 10_000 + SampleCatalog.movies.count)

            let connection = try await RawHTTPConnection(port: try #require(client.port))
            let export = Task { try await connection.exchange(Self.exportRequest, timeout: .seconds(60)) }
            await repository.held.wait()

            // Others write while the export is mid-stream: delete the newest rows, add new ones.
            try await database.execute("DELETE FROM movies WHERE id > 9000")
            #expect(try await database.integer("SELECT count(*) FROM movies") == 9000)
            for number in 1...20 {
                try await client.execute(
                    uri: "/movies",
                    method: .post,
                    body: json(#"{"title":"Added \#(number)","year":2024}"#)
                ) { #expect($0.status == .created) }
            }
            // The export's scope and its read transaction's connection are still held, once
            // the history records the writes handed off have finished.
            var stats = try await statistics(client)
            _ = try await eventually(within: .seconds(2)) {
                stats = try await statistics(client)
                return stats.otherOpenScopes == 1 && stats.database?.leased == 1
            }
            #expect(stats.otherOpenScopes == 1)
            #expect(stats.database?.leased == 1)
            repository.release.fire()

            let response = try await export.value
            #expect(response.hasPrefix("HTTP/1.1 200 OK"))
            #expect(response.lowercased().contains("content-type: application/x-ndjson"))
            #expect(response.lowercased().contains("transfer-encoding: chunked"))
            let body = try #require(RawHTTPConnection.chunkedBody(of: response))
            let movies = try body.split(separator: "\n")
                .map { try JSONDecoder().decode(Movie.self, from: Data($0.utf8)) }
            // Exactly the snapshot's rows, in ID order: none deleted since, none added since.
            #expect(movies.map(\.id) == snapshot)
            #expect(movies.first?.title == SampleCatalog.movies.first?.title)

            let settled = try await settledStatistics(client)
            #expect(settled.otherOpenScopes == 0)
            #expect(settled.database?.leased == 0)
        }
    }

    @Test(arguments: Backend.available)
    func aClientThatLeavesHalfwayLeavesNoScopeAndNoConnectionBehindWithinASecond(backend: Backend) async throws {
        let repository = HoldingRepository(base: backend.repository, heldAfter: 5000)
        try await withCatalogServer(on: backend, repository: repository) { client, _, database in
            try await addMovies(10_000, to: database)
            let connection = try await RawHTTPConnection(port: try #require(client.port))
            let received = try await connection.exchange(Self.exportRequest) { $0.contains(#""id":4000,"#) }
            #expect(RawHTTPConnection.chunkedBody(of: received) == nil)  // it left mid-body
            await repository.held.wait()
            // The client has gone; the export goes on writing until the connection refuses.
            repository.release.fire()
            let stats = try await settledStatistics(client)
            #expect(stats.otherOpenScopes == 0)
            #expect(stats.database?.leased == 0)
        }
    }
}
