import Foundation
import Logging
import PostgresNIO
import Scoped
import ScopedDatabase
import ScopedPostgres
import ScopedTestSupport
import Testing

/// What a request sends PostgreSQL, counted by PostgreSQL itself (`pg_stat_statements`): a
/// read-only scope sends its statements and nothing else, a tenant's read sends no statement
/// for its schema once its connection is on it, and a write keeps its one transaction.
@Suite(postgresAvailable, .loadExclusion)
struct PostgresRoundTripTests {
    @Test func aReadOnlyScopeSendsNoBeginAndNoCommit() async throws {
        let fixture = try await PostgresFixture()
        try await fixture.withRoot { root in
            try await root.withScope {
                try await ScopedValues.current.postgresSession.execute("INSERT INTO items (name) VALUES ('one')")
            }
            try await fixture.resetStatementCounts()
            for _ in 0..<5 {
                let name = try await root.withScope({ $0.transactionMode = .readOnly }) {
                    try await ScopedValues.current.postgresSession.query(ItemName(id: 1))
                }
                #expect(name == ["one"])
            }
        }
        let counts = try await fixture.statementCounts()
        #expect(counts[ItemName.sql] == 5)
        // The five reads sent nothing else: no BEGIN, no COMMIT, no search_path.
        #expect(counts.values.reduce(0, +) == 5, "\(counts)")
    }

    @Test func eachStatementOfAReadOnlyScopeRunsOnItsOwnAndASnapshotScopeInOneTransaction() async throws {
        let fixture = try await PostgresFixture()
        try await fixture.withRoot { root in
            // `now()` is the time its transaction began: the same for every statement of one.
            let sql: PostgresQuery = "SELECT now()::text"
            for (mode, onItsOwn) in [(TransactionMode.readOnly, true), (.readOnlySnapshot, false)] {
                let (first, second) = try await root.withScope({ $0.transactionMode = mode }) {
                    let session = try await ScopedValues.current.postgresSession
                    let first = try await session.query(sql)[0].decode(String.self)
                    try await Task.sleep(for: .milliseconds(5))
                    return (first, try await session.query(sql)[0].decode(String.self))
                }
                #expect((first != second) == onItsOwn, "\(mode)")
            }
        }
    }

    @Test func aSnapshotScopeSeesOneSnapshotWhereAReadOnlyScopeSeesEachCommit() async throws {
        let fixture = try await PostgresFixture()
        try await fixture.withRoot { root in
            for (mode, seesTheInsert) in [(TransactionMode.readOnly, true), (.readOnlySnapshot, false)] {
                let (before, after) = try await root.withScope({ $0.transactionMode = mode }) {
                    let session = try await ScopedValues.current.postgresSession
                    let before = try await session.query("SELECT count(*) FROM items")[0].decode(Int.self)
                    try await fixture.server.psql(
                        "INSERT INTO items (name) VALUES ('\(mode)')",
                        database: fixture.database
                    )
                    let after = try await session.query("SELECT count(*) FROM items")[0].decode(Int.self)
                    return (before, after)
                }
                #expect(after == before + (seesTheInsert ? 1 : 0), "\(mode)")
            }
        }
    }

    @Test(arguments: [TransactionMode.readOnly, .readOnlySnapshot])
    func aWriteThroughAReadSessionIsRefusedByPostgreSQLAndWritesNothing(mode: TransactionMode) async throws {
        let fixture = try await PostgresFixture()
        try await fixture.withRoot { root in
            let error = await #expect(throws: PostgresDatabaseError.self) {
                try await root.withScope({ $0.transactionMode = mode }) {
                    try await ScopedValues.current.postgresSession.execute("INSERT INTO items (name) VALUES ('no')")
                }
            }
            // read_only_sql_transaction: PostgreSQL's own refusal, not the session's.
            #expect(error?.sqlState == "25006")
        }
        #expect(try await fixture.itemCount() == 0)
    }

    @Test func aWriteKeepsItsOneTransaction() async throws {
        let fixture = try await PostgresFixture()
        try await fixture.withRoot { root in
            try await fixture.resetStatementCounts()
            try await root.withScope {
                try await ScopedValues.current.postgresSession.execute("INSERT INTO items (name) VALUES ('one')")
            }
        }
        let counts = try await fixture.statementCounts()
        #expect(counts["BEGIN"] == 1)
        #expect(counts["COMMIT"] == 1)
        #expect(counts.values.reduce(0, +) == 3, "\(counts)")
    }

    @Test func tenantsThatAlternateOnOneReadConnectionNeverReadEachOthersRows() async throws {
        let fixture = try await PostgresFixture()
        try await TenantDatabases.with(fixture, readConnections: 1) { tenants in
            try await fixture.resetStatementCounts()
            // Both tenants at once, through the read client's one connection, each read its own
            // tenant's only row: with an unnamed statement and with a prepared one.
            let crossed = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<400 {
                    let (tenant, database) = tenants.databases[index % 2]
                    group.addTask {
                        let session = PostgresSession(database: database, mode: .readOnly)
                        let unnamed = try await session.query("SELECT name FROM items")
                            .map { try $0.decode(String.self) }
                        let prepared = try await session.query(ItemName(id: 1))
                        try await session.finish(.success)
                        return (unnamed == [tenant] ? 0 : 1) + (prepared == [tenant] ? 0 : 1)
                    }
                }
                return try await group.reduce(0, +)
            }
            #expect(crossed == 0)
            // No schema was set inside a transaction: each move is one statement of its own.
            let counts = try await fixture.statementCounts()
            #expect(counts.keys.allSatisfy { !$0.hasPrefix("BEGIN") && !$0.hasPrefix("SET LOCAL") }, "\(counts)")
        }
    }

    @Test func aTenantsReadOnAConnectionAlreadyOnItsSchemaSendsNothingForIt() async throws {
        let fixture = try await PostgresFixture()
        try await TenantDatabases.with(fixture, readConnections: 1) { tenants in
            try await fixture.resetStatementCounts()
            for _ in 0..<10 {
                let session = PostgresSession(database: tenants.databases[0].database, mode: .readOnly)
                #expect(try await session.query(ItemName(id: 1)) == [tenants.databases[0].tenant])
                try await session.finish(.success)
            }
            let counts = try await fixture.statementCounts()
            #expect(counts[ItemName.sql] == 10)
            #expect(counts["SET search_path TO \"t_acme\""] == 1, "\(counts)")
            #expect(counts.values.reduce(0, +) == 11, "\(counts)")
        }
    }

    @Test func aConnectionThatDiesBetweenTwoReadsFailsTheSecondAndTheNextScopeReadsItsOwnSchema() async throws {
        let fixture = try await PostgresFixture()
        try await TenantDatabases.with(fixture, readConnections: 1) { tenants in
            let (acme, acmeDatabase) = tenants.databases[0]
            let (_, globexDatabase) = tenants.databases[1]
            let session = PostgresSession(database: acmeDatabase, mode: .readOnly)
            let pid = try await session.query("SELECT pg_backend_pid()")[0].decode(Int.self)
            try await fixture.server.psql("SELECT pg_terminate_backend(\(pid))", database: fixture.database)
            let error = await #expect(throws: PostgresDatabaseError.self) {
                _ = try await session.query("SELECT name FROM items")
            }
            #expect(error?.kind == .connectionLost, "\(String(describing: error))")
            try? await session.finish(.failure(Failure()))
            // The read client's one connection is new: on no tenant's schema until a session sets it.
            let next = PostgresSession(database: globexDatabase, mode: .readOnly)
            let globexRows = try await next.query(ItemName(id: 1))
            try await next.finish(.success)
            #expect(globexRows != [acme])
            #expect(globexRows == [tenants.databases[1].tenant])
            let app = PostgresSession(database: tenants.app, mode: .readOnly)
            #expect(try await app.query("SHOW search_path")[0].decode(String.self) == "\"$user\", public")
            try await app.finish(.success)
        }
    }

    @Test func aRestartedServerLeavesNoConnectionOnATenantsSchema() async throws {
        let fixture = try await PostgresFixture(server: .dedicated())
        try await TenantDatabases.with(fixture, readConnections: 1) { tenants in
            let acme = PostgresSession(database: tenants.databases[0].database, mode: .readOnly)
            #expect(try await acme.query(ItemName(id: 1)) == [tenants.databases[0].tenant])
            try await acme.finish(.success)
            #expect(tenants.app.statistics().readConnectionsOffDefaultPath == 1)
            try await fixture.server.restart(mode: "fast")
            // The old connection is gone; whichever the pool opens next starts on the default.
            var path: String?
            #expect(
                await eventually {
                    let app = PostgresSession(database: tenants.app, mode: .readOnly)
                    path = try? await app.query("SHOW search_path")[0].decode(String.self)
                    try? await app.finish(.success)
                    return path != nil
                }
            )
            #expect(path == "\"$user\", public")
            #expect(tenants.app.statistics().readConnectionsOffDefaultPath == 0)
        }
    }

    @Test func aSnapshotsCommitIsNotWaitedForAndOneThatNeverAnswersIsCountedAndItsLeaseReturned() async throws {
        let fixture = try await PostgresFixture(server: .dedicated())
        try await fixture.withRoot(statementTimeout: .seconds(1)) { root in
            let database = try await root.withScope { try await ScopedValues.current.postgresDatabase }
            let pid = try await root.withScope({ $0.transactionMode = .readOnlySnapshot }) {
                let session = try await ScopedValues.current.postgresSession
                let pid = try await session.query("SELECT pg_backend_pid()")[0].decode(Int32.self)
                // The backend stops answering: its COMMIT, sent as the scope ends, never returns.
                kill(pid, SIGSTOP)
                return pid
            }
            defer { kill(pid, SIGCONT) }
            // The scope ended without the COMMIT's answer; the lease is still out until its deadline.
            #expect(database.statistics().leased == 1)
            #expect(database.statistics().failedReadOnlyCommits == 0)
            #expect(await eventually { database.statistics().leased == 0 })
            #expect(database.statistics().failedReadOnlyCommits == 1)
            kill(pid, SIGCONT)
            // The process serves on: the next read takes another connection.
            let count = try await root.withScope({ $0.transactionMode = .readOnlySnapshot }) {
                try await ScopedValues.current.postgresSession.query("SELECT count(*) FROM items")[0].decode(Int.self)
            }
            #expect(count == 0)
        }
    }
}

/// `SELECT name FROM items WHERE id = $1`, prepared.
struct ItemName: PostgresPreparedStatement {
    static let sql = "SELECT name FROM items WHERE id = $1"
    static let bindingDataTypes: [PostgresDataType] = [.int8]
    typealias Row = String
    var id: Int

    func makeBindings() -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 1)
        bindings.append(id)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> String { try row.decode(String.self) }
}

/// Two tenants' databases (`acme`, `globex`), each with one item named for its tenant, and the
/// application's, on one running client and one running read client.
struct TenantDatabases {
    let app: ScopedPostgres.PostgresDatabase
    let databases: [(tenant: String, database: ScopedPostgres.PostgresDatabase)]

    static func with(
        _ fixture: PostgresFixture,
        readConnections: Int,
        _ body: (TenantDatabases) async throws -> Void
    ) async throws {
        var configuration = try PostgresConfiguration(
            url: fixture.url,
            maximumConnections: 4,
            migrations: itemMigrations
        )
        configuration.maximumReadConnections = readConnections
        let logger = Logger(label: "test")
        let client = PostgresClient(configuration: configuration.clientConfiguration)
        let readClient = PostgresReadClient(configuration: configuration, backgroundLogger: logger)
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { await client.run() }
            group.addTask { await readClient.run() }
            let app = try await ScopedPostgres.PostgresDatabase(
                client: client,
                readClient: readClient,
                configuration: configuration,
                logger: logger
            )
            var databases: [(String, ScopedPostgres.PostgresDatabase)] = []
            for tenant in ["acme", "globex"] {
                let database = try await ScopedPostgres.PostgresDatabase(
                    client: client,
                    readClient: readClient,
                    configuration: configuration,
                    schema: PostgresSchema(tenant: TenantID(tenant)!),
                    logger: logger
                )
                let session = PostgresSession(database: database)
                try await session.execute("INSERT INTO items (name) VALUES (\(tenant))")
                try await session.finish(.success)
                databases.append((tenant, database))
            }
            try await body(TenantDatabases(app: app, databases: databases))
            group.cancelAll()
        }
    }
}

extension PostgresFixture {
    /// Forgets what `pg_stat_statements` counted on the fixture's database so far.
    func resetStatementCounts() async throws {
        try await server.psql("CREATE EXTENSION IF NOT EXISTS pg_stat_statements", database: database)
        try await server.psql(
            "SELECT pg_stat_statements_reset(0, (SELECT oid FROM pg_database WHERE datname = current_database()), 0)",
            database: database
        )
    }

    /// How many times each statement ran on the fixture's database since
    /// ``resetStatementCounts()``, by its text (constants as `$1`), whitespace folded; psql's
    /// own statements left out.
    func statementCounts() async throws -> [String: Int] {
        let rows = try await server.psql(
            """
            SELECT regexp_replace(query, '\\s+', ' ', 'g') || E'\\t' || calls FROM pg_stat_statements
            WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
            AND query NOT LIKE '%pg_stat_statements%'
            """,
            database: database
        )
        var counts: [String: Int] = [:]
        for line in rows.split(separator: "\n") {
            guard let tab = line.lastIndex(of: "\t"), let calls = Int(line[line.index(after: tab)...]) else { continue }
            counts[String(line[..<tab]), default: 0] += calls
        }
        return counts
    }
}
