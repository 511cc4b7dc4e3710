import Logging
import PostgresNIO
import Scoped
import ScopedPostgres
import ScopedTestSupport
import Testing

/// Database errors arrive classified, so that an application can answer each one.
@Suite(postgresAvailable)
struct PostgresErrorTests {
    /// The error a statement run in its own scope throws.
    private func error(of query: PostgresQuery, on root: ScopeRoot) async -> PostgresDatabaseError? {
        do {
            _ = try await root.withScope { try await ScopedValues.current.postgresSession.execute(query) }
            return nil
        } catch {
            return error as? PostgresDatabaseError
        }
    }

    @Test func constraintViolationsSerializationFailuresAndAFullServerHaveTheirKinds() async throws {
        let fixture = try await PostgresFixture()
        try await fixture.withRoot { root in
            _ = try await root.withScope {
                try await ScopedValues.current.postgresSession.execute("INSERT INTO items (name) VALUES ('taken')")
            }
            let duplicate = await error(of: "INSERT INTO items (name) VALUES ('taken')", on: root)
            #expect(duplicate?.kind == .uniqueViolation)
            #expect(duplicate?.constraint == "items_name_key")
            let missing = await error(of: "INSERT INTO tags (item_id, tag) VALUES (999, 'x')", on: root)
            #expect(missing?.kind == .foreignKeyViolation)
            // The server raising these SQLSTATEs as a conflict or a full server would.
            let conflict = await error(
                of: "DO $$ BEGIN RAISE EXCEPTION 'conflict' USING ERRCODE = 'serialization_failure'; END $$",
                on: root
            )
            #expect(conflict?.kind == .serializationFailure)
            #expect(conflict?.sqlState == "40001")
            let full = await error(
                of: "DO $$ BEGIN RAISE EXCEPTION 'full' USING ERRCODE = 'too_many_connections'; END $$",
                on: root
            )
            #expect(full?.kind == .tooManyConnections)
            let syntax = await error(of: "SELEC 1", on: root)
            #expect(syntax?.kind == .other)
            #expect(syntax?.sqlState == "42601")
        }
    }

    @Test func aConnectionTerminatedMidScopeIsConnectionLostAndTheScopeStillEnds() async throws {
        let fixture = try await PostgresFixture()
        try await fixture.withRoot { root in
            let lost = await #expect(throws: PostgresDatabaseError.self) {
                try await root.withScope {
                    let session = try await ScopedValues.current.postgresSession
                    let pid = try await session.query("SELECT pg_backend_pid()")[0].decode(Int32.self)
                    try await fixture.server.psql("SELECT pg_terminate_backend(\(pid))", database: fixture.database)
                    // Once the backend is gone and the client has read the end of the stream.
                    // (A statement sent before the client noticed would wait forever: postgres-nio
                    // drops it without failing it. The session cannot see that case.)
                    #expect(
                        try await eventually {
                            try await fixture.server.psql(
                                "SELECT count(*) FROM pg_stat_activity WHERE pid = \(pid)",
                                database: fixture.database
                            ) == "0"
                        }
                    )
                    try await Task.sleep(for: .milliseconds(200))
                    try await session.execute("INSERT INTO items (name) VALUES ('after')")
                }
            }
            #expect(lost?.kind == .connectionLost)
            #expect(root.openScopeCount == 0)
            // The pool replaces the connection: the next scope works.
            _ = try await root.withScope {
                try await ScopedValues.current.postgresSession.execute("INSERT INTO items (name) VALUES ('next')")
            }
        }
        #expect(try await fixture.itemCount() == 1)
    }
}
