import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import MovieCatalog
import Scoped
import ScopedSQLite
import ScopedTestSupport
import Testing

@testable import CatalogApp

/// The SQLite repository, holding the export mid-stream: the first read of a batch after
/// `heldAfter` fires `held` and waits for `release`.
struct HoldingRepository: ForwardingRepository {
    let base: any MovieRepository = SQLiteMovieRepository()
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

/// `GET /movies/export`: the catalog streamed as NDJSON from one snapshot, on the real server
/// and a real SQLite file.
struct CatalogExportTests {
    /// A development server on `repository`, whose database holds the sample catalog plus
    /// `count` more movies, and a second handle on its file, as another process would have.
    private func makeSeededApplication(
        folder: TemporaryFolder,
        repository: HoldingRepository,
        count: Int
    ) async throws -> (some ApplicationProtocol, ScopeRoot, SQLiteDatabase) {
        let (app, root) = try await withScopedValues({ $0.movieRepository = repository }) {
            try await makeApplication(try await loadConfiguration(.development, folder: folder))
        }
        let database = try SQLiteDatabase(SQLiteConfiguration(path: folder.path("catalog.sqlite")))
        try await database.write { transaction in
            for number in 1...count {
                _ = try transaction.insert(
                    "INSERT INTO movies (title, year, director) VALUES (\("Movie \(number)"), \(1900 + number % 120), NULL)"
                )
            }
        }
        return (app, root, database)
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

    @Test func theExportIsOneSnapshotEvenWhileOtherRequestsWrite() async throws {
        let folder = try TemporaryFolder()
        let repository = HoldingRepository(heldAfter: 2000)
        let (app, root, database) = try await makeSeededApplication(
            folder: folder,
            repository: repository,
            count: 10_000
        )
        let snapshot = try await database.read { try $0.query("SELECT id FROM movies ORDER BY id", as: MovieID.self) }
        #expect(snapshot.count == 10_000 + SampleCatalog.movies.count)

        try await app.test(.live) { client in
            let connection = try await RawHTTPConnection(port: try #require(client.port))
            let export = Task { try await connection.exchange(Self.exportRequest, timeout: .seconds(60)) }
            await repository.held.wait()

            // Others write while the export is mid-stream: delete the newest rows, add new ones.
            let removed = try await database.write { try $0.execute("DELETE FROM movies WHERE id > 9000") }
            #expect(removed == snapshot.count - 9000)
            for number in 1...20 {
                try await client.execute(
                    uri: "/movies",
                    method: .post,
                    body: json(#"{"title":"Added \#(number)","year":2024}"#)
                ) { #expect($0.status == .created) }
            }
            // The export's scope and its read transaction's connection are still held.
            let stats = try await statistics(client)
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
            #expect(movies.map(\.id) == snapshot.map(\.id))
            #expect(movies.first?.title == SampleCatalog.movies.first?.title)

            let settled = try await settledStatistics(client)
            #expect(settled.otherOpenScopes == 0)
            #expect(settled.database?.leased == 0)
        }
        await database.close()
        await root.shutdown()
    }

    @Test func aClientThatLeavesHalfwayLeavesNoScopeAndNoConnectionBehindWithinASecond() async throws {
        let folder = try TemporaryFolder()
        let repository = HoldingRepository(heldAfter: 5000)
        let (app, root, database) = try await makeSeededApplication(
            folder: folder,
            repository: repository,
            count: 10_000
        )
        await database.close()
        try await app.test(.live) { client in
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
        await root.shutdown()
    }
}

/// A row's ID.
private struct MovieID: Decodable, Sendable {
    var id: Int
}
