import Configuration
import Foundation
import Logging
import ScopedPostgres
import ScopedTestSupport
import ServiceLifecycle
import Testing

/// The settings provider on a real database: what the SQL functions accept, how a change
/// reaches a running provider, and what it does when its connection or the server fails.
@Suite(postgresAvailable, .timeLimit(.minutes(2)))
struct PostgresSettingsProviderTests {
    static let keys: [String: PostgresSettingType] = [
        "log.level": .string,
        "catalog.repository": .string,
        "database.connections": .integer,
        "shutdown.closeTimeout": .number,
        "debug.routes": .boolean,
        "overrides.variants": .stringArray,
    ]

    /// A provider on `fixture`'s database.
    static func provider(_ fixture: PostgresFixture, pollInterval: Duration = .seconds(60)) throws
        -> PostgresSettingsProvider
    {
        var configuration = try PostgresConfiguration(url: fixture.url)
        configuration.statementTimeout = .seconds(2)
        return PostgresSettingsProvider(
            configuration: configuration,
            keys: keys,
            pollInterval: pollInterval,
            logger: Logger(label: "settings")
        )
    }

    /// Runs `provider` beside `body`, and stops it after.
    static func running<R: Sendable>(
        _ provider: PostgresSettingsProvider,
        _ body: () async throws -> R
    ) async throws -> R {
        try await withThrowingTaskGroup { group in
            group.addTask { try await provider.run() }
            defer { group.cancelAll() }
            // Listening before the body commits anything: otherwise only a poll would see it.
            #expect(await eventually { provider.status.isListening })
            return try await body()
        }
    }

    @Test func theFunctionsRefuseUnknownKeysWrongTypesAndTextThatIsNotJSON() async throws {
        let fixture = try await PostgresFixture()
        try await Self.provider(fixture).load()
        let refusals: [(sql: String, says: String)] = [
            ("SELECT scoped_set_setting('log.levle', '\"debug\"')", #"unknown setting key "log.levle""#),
            ("SELECT scoped_set_setting('log.level', 'debug')", #"setting "log.level": debug is not a JSON value"#),
            ("SELECT scoped_set_setting('log.level', '3')", #"setting "log.level": expected string but got 3"#),
            (
                "SELECT scoped_set_setting('database.connections', '2.5')",
                #"setting "database.connections": expected integer but got 2.5"#
            ),
            ("SELECT scoped_set_setting('debug.routes', '\"yes\"')", #"expected boolean but got "yes""#),
            ("SELECT scoped_set_setting('overrides.variants', '[\"a\", 1]')", #"expected string array"#),
            ("SELECT scoped_unset_setting('nope')", #"unknown setting key "nope""#),
        ]
        for refusal in refusals {
            let error = await #expect(throws: PostgresTestServerError.self) {
                try await fixture.server.psql(refusal.sql, database: fixture.database)
            }
            #expect(error?.message.contains(refusal.says) == true, "\(refusal.sql): \(String(describing: error))")
        }
        // Nothing refused was written, and the version did not move.
        #expect(
            try await fixture.server.psql("SELECT count(*) FROM scoped_settings", database: fixture.database) == "0"
        )
        #expect(
            try await fixture.server.psql("SELECT version FROM scoped_settings_version", database: fixture.database)
                == "0"
        )
        // What each type accepts.
        for accepted in [
            "SELECT scoped_set_setting('database.connections', '30')",
            "SELECT scoped_set_setting('shutdown.closeTimeout', '2.5')",
            "SELECT scoped_set_setting('debug.routes', 'true')",
            "SELECT scoped_set_setting('overrides.variants', '[\"a\", \"b\"]')",
        ] {
            try await fixture.server.psql(accepted, database: fixture.database)
        }
        let provider = try Self.provider(fixture)
        try await provider.load()
        let reader = ConfigReader(provider: provider)
        #expect(provider.currentSnapshot.version == 4)
        #expect(reader.int(forKey: "database.connections") == 30)
        #expect(reader.double(forKey: "shutdown.closeTimeout") == 2.5)
        #expect(reader.bool(forKey: "debug.routes") == true)
        #expect(reader.stringArray(forKey: "overrides.variants") == ["a", "b"])
    }

    @Test func aChangeOfSeveralKeysIsReadWholeFromItsNotification() async throws {
        let fixture = try await PostgresFixture()
        // A poll would come after the test's time limit: only a notification can be in time.
        let provider = try Self.provider(fixture, pollInterval: .seconds(600))
        try await provider.load()
        try await fixture.server.psql(
            "SELECT scoped_set_setting('log.level', '\"info\"'); SELECT scoped_set_setting('catalog.repository', '\"sqlite\"')",
            database: fixture.database
        )
        let seen = Recorder<(version: Int64, level: String?, repository: String?)>()
        try await Self.running(provider) {
            try await withThrowingTaskGroup { group in
                group.addTask {
                    try await provider.watchSnapshot { snapshots in
                        for await snapshot in snapshots {
                            let version = try #require(snapshot as? PostgresSettingsSnapshot)
                            // A reader of that one version.
                            let reader = ConfigReader(provider: version)
                            let read = (
                                version: version.version,
                                level: reader.string(forKey: "log.level"),
                                repository: reader.string(forKey: "catalog.repository")
                            )
                            seen.record(read)
                            if read.level == "debug" { return }
                        }
                    }
                }
                // One transaction, two keys.
                try await fixture.server.psql(
                    """
                    BEGIN;
                    SELECT scoped_set_setting('log.level', '"debug"');
                    SELECT scoped_set_setting('catalog.repository', '"memory"');
                    COMMIT;
                    """,
                    database: fixture.database
                )
                // Arrived: by its notification, since no poll comes within the test's time limit.
                try await group.waitForAll()
            }
        }
        let reads = seen.all
        // Every version read is a committed one: never the level changed without the repository.
        for read in reads {
            #expect(
                (read.level == "debug") == (read.repository == "memory"),
                "version \(read.version): \(String(describing: read.level)) / \(String(describing: read.repository))"
            )
        }
        #expect(reads.last?.version == 4)
        #expect(provider.status.source == .notify)
    }

    @Test func aTerminatedListeningConnectionIsMadeAgainAndWhatItMissedIsRead() async throws {
        let fixture = try await PostgresFixture()
        let provider = try Self.provider(fixture, pollInterval: .seconds(1))
        try await provider.load()
        try await Self.running(provider) {
            // The provider's listening connection names itself after its channel.
            let terminate = """
                SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                WHERE datname = current_database() AND application_name = 'scoped_settings'
                """
            #expect(try await fixture.server.psql(terminate, database: fixture.database) == "t")
            // Committed while the connection was down (or just after): no notification reaches it.
            try await fixture.server.psql(
                "SELECT scoped_set_setting('log.level', '\"warning\"')",
                database: fixture.database
            )
            #expect(await eventually(within: .seconds(5)) { provider.currentSnapshot.version == 1 })
            #expect(await eventually(within: .seconds(5)) { provider.status.isListening })
            // Listening again: the next change comes by its notification.
            try await fixture.server.psql(
                "SELECT scoped_set_setting('log.level', '\"error\"')",
                database: fixture.database
            )
            #expect(await eventually(within: .seconds(5)) { provider.currentSnapshot.version == 2 })
        }
        #expect(ConfigReader(provider: provider).string(forKey: "log.level") == "error")
    }

    @Test func whileTheServerIsDownTheLastVersionIsKeptAndAfterItIsBackTheNextIsRead() async throws {
        let fixture = try await PostgresFixture(server: .dedicated())
        let provider = try Self.provider(fixture, pollInterval: .seconds(1))
        try await provider.load()
        try await fixture.server.psql(
            "SELECT scoped_set_setting('log.level', '\"notice\"')",
            database: fixture.database
        )
        try await Self.running(provider) {
            #expect(await eventually { provider.currentSnapshot.version == 1 })
            try await fixture.server.stop(mode: "fast")
            #expect(await eventually { !provider.status.isListening })
            // Down for a while: several reconnections fail, and the version read last stays.
            try await Task.sleep(for: .seconds(3))
            #expect(provider.currentSnapshot.version == 1)
            #expect(ConfigReader(provider: provider).string(forKey: "log.level") == "notice")
            try await fixture.server.startAgain()
            try await fixture.server.psql(
                "SELECT scoped_set_setting('log.level', '\"critical\"')",
                database: fixture.database
            )
            // Back within the longest backoff (the poll interval) and a read.
            #expect(await eventually(within: .seconds(10)) { provider.currentSnapshot.version == 2 })
            #expect(await eventually(within: .seconds(10)) { provider.status.isListening })
        }
        #expect(ConfigReader(provider: provider).string(forKey: "log.level") == "critical")
    }

    @Test func aFrozenServerClosesTheConnectionAtTheReadTimeoutAndTheVersionIsKept() async throws {
        let fixture = try await PostgresFixture(server: .dedicated())
        let provider = try Self.provider(fixture, pollInterval: .milliseconds(500))
        try await provider.load()
        try await Self.running(provider) {
            let pid = try await fixture.server.psql(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'scoped_settings'",
                database: fixture.database
            )
            let backend = try #require(pid.split(separator: "\n").first.flatMap { pid_t($0) })
            kill(backend, SIGSTOP)
            defer { kill(backend, SIGCONT) }
            // The next poll does not answer: within its 2 s read timeout the connection is given up.
            #expect(await eventually(within: .seconds(10)) { !provider.status.isListening })
            #expect(provider.currentSnapshot.version == 0)
            // A new connection (another backend) listens again and reads the next change.
            #expect(await eventually(within: .seconds(10)) { provider.status.isListening })
            try await fixture.server.psql(
                "SELECT scoped_set_setting('log.level', '\"debug\"')",
                database: fixture.database
            )
            #expect(await eventually(within: .seconds(10)) { provider.currentSnapshot.version == 1 })
        }
    }
}
