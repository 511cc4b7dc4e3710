import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import HummingbirdWSClient
import HummingbirdWSTesting
import MovieCatalog
import Scoped
import ScopedSQLite
import ScopedTestSupport
import ScopedTesting
import Testing

@testable import CatalogApp

/// Writes a rating through the backend's repository, then fails for three stars, as a message
/// handler failing after its write.
struct FailingOnThreeStarsRepository: ForwardingRepository {
    struct Failure: Error {}
    let base: any MovieRepository

    func addRating(movieID: Int, stars: Int) async throws -> Bool {
        let added = try await base.addRating(movieID: movieID, stars: stars)
        if stars == 3 { throw Failure() }
        return added
    }
}

/// `GET /movies/live`, the WebSocket: each message in its own scope and transaction, on the
/// real server, on either backend.
@Suite(.loadExclusion)
struct CatalogLiveRatingsTests {
    /// Sends `messages` on one WebSocket connection and returns the reply to each, parsed.
    private func converse(_ client: some TestClientProtocol, _ messages: [String]) async throws -> [[String: Any]] {
        let replies = Recorder<String>()
        try await client.ws("/movies/live") { inbound, outbound, _ in
            var iterator = inbound.messages(maxSize: 1 << 16).makeAsyncIterator()
            for message in messages {
                try await outbound.write(.text(message))
                guard case .text(let reply) = try await iterator.next() else { return }
                replies.record(reply)
            }
        }
        return replies.all.map { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] ?? [:] }
    }

    private func ratingCount(_ database: TestDatabase) async throws -> Int? {
        try await database.integer("SELECT count(*) FROM ratings")
    }

    @Test(arguments: Backend.available)
    func aThousandMessagesOnOneConnectionWriteAThousandRatingsEachCommittedBeforeItsReply(
        backend: Backend
    ) async throws {
        let database = try await TestDatabase(backend)
        let messages = (1...1000).map { #"{"rate":{"movieID":1,"stars":\#($0 % 5 + 1)}}"# }
        try await withCatalogServer(on: database) { client, root, _ in
            let replies = try await converse(client, messages)
            #expect(replies.count == 1000)
            // Each reply counts every rating before it and its own: it was sent after its commit.
            #expect(replies.map { $0["count"] as? Int } == (1...1000).map { $0 })
            #expect(replies.allSatisfy { $0["movieID"] as? Int == 1 })
            #expect(await eventually { root.openScopeCount == 0 })
        }
        #expect(try await ratingCount(database) == 1000)
    }

    @Test(arguments: Backend.available)
    func aMessageWhoseHandlerThrowsRollsBackOnlyItsOwnWrite(backend: Backend) async throws {
        let database = try await TestDatabase(backend)
        let failing = FailingOnThreeStarsRepository(base: backend.repository)
        try await withCatalogServer(on: database, repository: failing) { client, root, _ in
            let replies = try await converse(
                client,
                [5, 3, 4].map { #"{"rate":{"movieID":2,"stars":\#($0)}}"# }
            )
            #expect(replies[0]["count"] as? Int == 1)
            #expect((replies[1]["error"] as? [String: Any])?["code"] as? String == "internal_error")
            #expect(replies[2]["count"] as? Int == 2)
            #expect(replies[2]["average"] as? Double == 4.5)
            #expect(await eventually { root.openScopeCount == 0 })
        }
        #expect(try await ratingCount(database) == 2)
    }

    @Test(arguments: Backend.available)
    func invalidMessagesGetAnErrorNamingTheProblemAndTheConnectionStaysOpen(backend: Backend) async throws {
        let database = try await TestDatabase(backend)
        try await withCatalogServer(on: database) { client, _, _ in
            let replies = try await converse(
                client,
                [
                    "not json",
                    #"{"rate":{"movieID":1}}"#,
                    #"{"rate":{"movieID":1,"stars":9}}"#,
                    #"{"rate":{"movieID":999999,"stars":5}}"#,
                    #"{"rate":{"movieID":3,"stars":2}}"#,
                ]
            )
            let errors = replies.map { $0["error"] as? [String: Any] }
            #expect(errors[0]?["code"] as? String == "malformed_json")
            #expect(errors[1]?["code"] as? String == "invalid_field")
            #expect(errors[1]?["field"] as? String == "rate.stars")
            #expect(errors[2]?["field"] as? String == "rate.stars")
            #expect(errors[3]?["code"] as? String == "not_found")
            #expect(errors.prefix(4).allSatisfy { ($0?["message"] as? String)?.isEmpty == false })
            // The same connection still serves a valid message.
            #expect(replies[4]["count"] as? Int == 1)
            #expect(replies[4]["movieID"] as? Int == 3)

            try await client.execute(uri: "/movies/live", method: .get) { response in
                response.expectError(.upgradeRequired, code: "upgrade_required", field: nil)
                #expect(response.headers[.upgrade] == "websocket")
            }
        }
        #expect(try await ratingCount(database) == 1)
    }
}
