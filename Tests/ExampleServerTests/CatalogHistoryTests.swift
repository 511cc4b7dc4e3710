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

    /// A database trigger that refuses to record a creation whose movie the record's own
    /// transaction cannot see: what a record handed off before its change committed would meet.
    private func refuseRecordsOfInvisibleMovies(in database: TestDatabase) async throws {
        switch database.backend {
        case .sqlite:
            try await database.execute(
                """
                CREATE TRIGGER record_needs_movie BEFORE INSERT ON movie_changes
                WHEN NEW.action = 'created' AND NOT EXISTS (SELECT 1 FROM movies WHERE id = NEW.movie_id)
                BEGIN SELECT RAISE(ABORT, 'movie not visible'); END
                """
            )
        case .postgres:
            try await database.execute(
                """
                CREATE FUNCTION record_needs_movie() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                  IF NEW.action = 'created' AND NOT EXISTS (SELECT 1 FROM movies WHERE id = NEW.movie_id) THEN
                    RAISE EXCEPTION 'movie % not visible', NEW.movie_id;
                  END IF;
                  RETURN NEW;
                END $$;
                CREATE TRIGGER record_needs_movie BEFORE INSERT ON movie_changes
                  FOR EACH ROW EXECUTE FUNCTION record_needs_movie();
                """
            )
        }
    }

    @Test(arguments: Backend.available)
    func eachCreationIsRecordedOnlyOnceItsMovieHasCommitted(backend: Backend) async throws {
        let database = try await TestDatabase(backend)
        let created = 40
        try await withCatalogServer(on: database) { client, _, database in
            try await refuseRecordsOfInvisibleMovies(in: database)
            // One after another, as a client that waits for each answer: each record races only
            // its own request's commit.
            for number in 1...created {
                try await client.execute(
                    uri: "/movies",
                    method: .post,
                    body: json(#"{"title":"Film \#(number)","year":2001}"#)
                ) { #expect($0.status == .created) }
            }
        }
        // The shutdown waited for every record; each saw its movie.
        let recorded = try await database.integer("SELECT count(*) FROM movie_changes WHERE action = 'created'")
        #expect(recorded == created)
    }

    /// How a commit fails at the database: a deferred constraint that refuses it, or the
    /// connection cut as it commits (the database gone between the statement and the commit).
    enum CommitFailure: String, CaseIterable, Sendable {
        case refused = "RAISE EXCEPTION 'refused at commit'"
        case connectionCut = "PERFORM pg_terminate_backend(pg_backend_pid())"
    }

    /// A commit that fails at the database: the change is not there, and nothing records it.
    @Test(
        .enabled(if: PostgresTestServer.isEnabled, Comment(rawValue: PostgresTestServer.unavailableReason ?? "")),
        arguments: CommitFailure.allCases
    )
    func aCreationWhoseCommitFailsIsNeverRecorded(failure: CommitFailure) async throws {
        let database = try await TestDatabase(.postgres)
        try await withCatalogServer(on: database) { client, root, database in
            try await database.execute(
                """
                CREATE FUNCTION cut_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                  IF NEW.title = 'Doomed' THEN \(failure.rawValue); END IF;
                  RETURN NULL;
                END $$;
                CREATE CONSTRAINT TRIGGER cut_at_commit AFTER INSERT ON movies DEFERRABLE INITIALLY DEFERRED
                  FOR EACH ROW EXECUTE FUNCTION cut_at_commit();
                """
            )
            try await client.execute(uri: "/movies", method: .post, body: json(#"{"title":"Doomed","year":2001}"#)) {
                // A lost connection is the documented 503; a refused commit a 500.
                #expect($0.status == (failure == .connectionCut ? .serviceUnavailable : .internalServerError))
            }
            let kept = try await client.execute(
                uri: "/movies",
                method: .post,
                body: json(#"{"title":"Kept","year":2001}"#)
            ) { try $0.decode(Movie.self) }
            _ = try await eventually { try await changes(client, movieID: kept.id).count == 1 }
            #expect(root.handOffsNotStarted == 1)
        }
        #expect(try await database.integer("SELECT count(*) FROM movies WHERE title = 'Doomed'") == 0)
        #expect(try await database.integer("SELECT count(*) FROM movie_changes") == 1)
        #expect(
            try await database.integers("SELECT movie_id FROM movie_changes") == [
                try #require(await database.integer("SELECT id FROM movies WHERE title = 'Kept'"))
            ]
        )
    }
}
