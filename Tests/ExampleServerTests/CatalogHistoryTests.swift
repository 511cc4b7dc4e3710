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
struct CatalogHistoryTests {
    private func changes(_ client: some TestClientProtocol, movieID: Int) async throws -> [MovieChange] {
        try await client.execute(uri: "/changes?movieID=\(movieID)", method: .get) {
            try $0.decode(MovieChanges.self).items
        }
    }

    @Test(arguments: Backend.available)
    func eachChangeIsRecordedAfterItsResponseWithTheIDOfTheRequestThatMadeIt(backend: Backend) async throws {
        try await withCatalogServer(on: backend) { client, _, _ in
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
    }

    @Test(arguments: Backend.available)
    func shutdownWaitsForChangesStillBeingRecorded(backend: Backend) async throws {
        let database = try await TestDatabase(backend)
        let created = 20
        // `withCatalogServer` stops the server, then shuts the root down, which waits for the
        // records handed off.
        try await withCatalogServer(on: database) { client, _, _ in
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
        }
        let recorded = try await database.integer("SELECT count(*) FROM movie_changes WHERE action = 'created'")
        #expect(recorded == created)
    }
}
