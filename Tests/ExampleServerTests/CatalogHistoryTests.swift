import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import MovieCatalog
import Scoped
import ScopedHummingbird
import ScopedSQLite
import ScopedTestSupport
import ScopedTesting
import Testing

@testable import CatalogApp

/// The history of changes, recorded by work handed off past each change's response.
@Suite(.scoped { $0.movieRepository = SQLiteMovieRepository() })
struct CatalogHistoryTests {
    private func changes(_ client: some TestClientProtocol, movieID: Int) async throws -> [MovieChange] {
        try await client.execute(uri: "/changes?movieID=\(movieID)", method: .get) {
            try $0.decode(MovieChanges.self).items
        }
    }

    @Test func eachChangeIsRecordedAfterItsResponseWithTheIDOfTheRequestThatMadeIt() async throws {
        let folder = try TemporaryFolder()
        let (app, root) = try await makeApplication(try await loadConfiguration(.development, folder: folder))
        try await app.test(.live) { client in
            let movie = try await client.execute(
                uri: "/movies",
                method: .post,
                headers: [.requestID: "create-1"],
                body: json(#"{"title":"Up","year":2009}"#)
            ) { try $0.decode(Movie.self) }
            try await client.execute(
                uri: "/movies/\(movie.id)",
                method: .put,
                headers: [.requestID: "replace-1"],
                body: json(#"{"title":"Up","year":2010}"#)
            ) { #expect($0.status == .ok) }
            try await client.execute(uri: "/movies/\(movie.id)", method: .delete, headers: [.requestID: "delete-1"]) {
                #expect($0.status == .noContent)
            }
            var recorded: [MovieChange] = []
            _ = try await eventually {
                recorded = try await changes(client, movieID: movie.id)
                return recorded.count >= 3
            }
            #expect(recorded.map(\.action) == [.created, .replaced, .deleted])
            #expect(recorded.map(\.requestID) == ["create-1", "replace-1", "delete-1"])
            #expect(recorded.allSatisfy { $0.movieID == movie.id && $0.changedAt.hasSuffix("Z") })
        }
        await root.shutdown()
    }

    @Test func shutdownWaitsForChangesStillBeingRecorded() async throws {
        let folder = try TemporaryFolder()
        let (app, root) = try await makeApplication(try await loadConfiguration(.development, folder: folder))
        let created = try await app.test(.live) { client in
            try await withThrowingTaskGroup { group in
                for number in 1...20 {
                    group.addTask {
                        try await client.execute(
                            uri: "/movies",
                            method: .post,
                            body: json(#"{"title":"Film \#(number)","year":2001}"#)
                        ) { #expect($0.status == .created) }
                    }
                }
                try await group.waitForAll()
            }
            return 20
        }
        // The server has stopped; shutting the root down waits for the records handed off.
        await root.shutdown()
        let database = try SQLiteDatabase(SQLiteConfiguration(path: folder.path("catalog.sqlite")))
        let recorded = try await database.read {
            try $0.scalar("SELECT count(*) FROM movie_changes WHERE action = 'created'", as: Int.self)
        }
        await database.close()
        #expect(recorded == created)
    }
}
