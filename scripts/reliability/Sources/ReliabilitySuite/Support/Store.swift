import Foundation
import ScopedTestSupport

/// The database a scenario's server runs on, and the suite's own way into it, outside the
/// server: a SQLite file through the C API (`RawDatabase`), or a database of its own on the
/// test PostgreSQL cluster through `psql`.
///
/// A scenario written against a store runs unchanged on either backend; its name gets `-pg`
/// on PostgreSQL.
struct Store: Sendable {
    enum Backend: Sendable { case sqlite, postgres }

    let backend: Backend
    /// The SQLite file; on PostgreSQL the server is given it and ignores it.
    let file: URL
    /// What selects the database in the server's environment.
    let environment: [String: String]
    private let postgres: (server: PostgresTestServer, database: String)?

    /// The PostgreSQL server the database is on, for a scenario that restarts or freezes it.
    var postgresServer: PostgresTestServer? { postgres?.server }
    /// The database's name on ``postgresServer``, on PostgreSQL.
    var postgresDatabase: String? { postgres?.database }

    /// A new, empty database named after `name`; on PostgreSQL, on `server` (by default the
    /// suite's shared cluster).
    init(_ backend: Backend, suite: SuiteOptions, name: String, server: PostgresTestServer? = nil) throws {
        self.backend = backend
        file = suite.databaseFile(name)
        switch backend {
        case .sqlite:
            environment = [:]
            postgres = nil
        case .postgres:
            let server = try server ?? PostgresTestServer.sharedBlocking()
            let created = try server.makeDatabaseBlocking()
            environment = ["DATABASE_KIND": "postgres", "DATABASE_URL": created.url]
            postgres = (server, created.name)
        }
    }

    /// Starts ExampleServer on this database in `profile`, with `environment` added to what
    /// selects the database; returns once `/health` answers.
    func startServer(
        _ suite: SuiteOptions,
        profile: String,
        environment extra: [String: String] = [:]
    ) throws -> ServerProcess {
        try ServerProcess(
            suite,
            profile: profile,
            database: file,
            environment: environment.merging(extra) { $1 }
        )
    }

    /// `name`, with `-pg` on PostgreSQL.
    func scenarioName(_ name: String) -> String { backend == .sqlite ? name : "\(name)-pg" }

    /// The type name the server's own repository reports in `/debug/echo`.
    var repositoryType: String { backend == .sqlite ? "SQLiteMovieRepository" : "PostgresMovieRepository" }

    /// Starts a second process that takes the write lock on the movies, holds it for
    /// `seconds` and exits 0: `BEGIN IMMEDIATE` on SQLite, `LOCK TABLE movies IN EXCLUSIVE
    /// MODE` on PostgreSQL (which leaves reads free, as SQLite's WAL does).
    func holdWriteLock(_ suite: SuiteOptions, seconds: Double) throws -> Process {
        guard let postgres else { return try WriteLockHolder.start(suite, database: file, seconds: seconds) }
        return try postgres.server.startPsql(
            "BEGIN; LOCK TABLE movies IN EXCLUSIVE MODE; SELECT pg_sleep(\(seconds)); COMMIT;",
            database: postgres.database
        )
    }

    /// The titles of the movies stored for `tenant`, or `nil` when it has no database: on SQLite
    /// its file in `tenants` (the server's `TENANTS_DIRECTORY`), on PostgreSQL its schema
    /// `t_<tenant>`.
    func tenantMovieTitles(_ tenant: String, in tenants: URL) throws -> Set<String>? {
        guard let postgres else {
            let path = tenants.appending(path: "\(tenant).sqlite").path
            guard FileManager.default.fileExists(atPath: path) else { return nil }
            return Set(try RawDatabase(path).movieTitles().values)
        }
        let schema = "t_\(tenant)"
        let exists = try postgres.server.psqlBlocking(
            "SELECT count(*) FROM pg_namespace WHERE nspname = '\(schema)'",
            database: postgres.database
        )
        guard exists == "0" || exists == "1" else { throw SuiteError("psql answered \(exists)") }
        guard exists == "1" else { return nil }
        return Set(
            try postgres.server.psqlBlocking("SELECT title FROM \"\(schema)\".movies", database: postgres.database)
                .split(separator: "\n").map(String.init)
        )
    }

    /// Every stored movie's title, by ID.
    func movieTitles() throws -> [Int: String] {
        guard let postgres else { return try RawDatabase(file.path).movieTitles() }
        return try postgres.server.movieTitles(database: postgres.database)
    }

    /// A digest of every row of the catalog's tables, to show that nothing changed.
    func contentDigest() throws -> String {
        guard let postgres else { return try RawDatabase(file.path).contentDigest() }
        let movies = try postgres.server.psqlBlocking(
            "SELECT id, title, year, director FROM movies ORDER BY id",
            database: postgres.database
        )
        let ratings = try postgres.server.psqlBlocking("SELECT * FROM ratings ORDER BY id", database: postgres.database)
        var hasher = FNV1a()
        hasher.add(movies)
        hasher.add("--")
        hasher.add(ratings)
        let count = movies.split(separator: "\n").count
        let ratingCount = ratings.split(separator: "\n").count
        return "\(count) movies, \(ratingCount) ratings, digest \(String(hasher.value, radix: 16))"
    }

    /// Transactions open on the database now, other than the probe's own, and how that was
    /// decided.
    ///
    /// SQLite: whether the write lock is free and a full checkpoint completes (no
    /// reader holds a snapshot). PostgreSQL: `pg_stat_activity` rows with a transaction.
    func openTransactions() throws -> (count: Int, how: String) {
        guard let postgres else {
            let probe = try RawDatabase(file.path)
            let writeLockFree = probe.writeLockIsFree()
            let checkpointed = try probe.checkpointCompletes()
            return (
                (writeLockFree ? 0 : 1) + (checkpointed ? 0 : 1),
                "write lock \(writeLockFree ? "free" : "held"), checkpoint \(checkpointed ? "complete" : "blocked by a reader")"
            )
        }
        let rows = try postgres.server.psqlBlocking(
            """
            SELECT state FROM pg_stat_activity
            WHERE datname = '\(postgres.database)' AND xact_start IS NOT NULL AND pid <> pg_backend_pid()
            """,
            database: postgres.database
        )
        let states = rows.split(separator: "\n").map(String.init)
        return (
            states.count, states.isEmpty ? "pg_stat_activity" : "pg_stat_activity: \(states.joined(separator: ", "))"
        )
    }

    /// ``openTransactions()`` once it reaches 0, or as it is after `timeout`: a server that
    /// was killed leaves its connections to the database server until it notices them closed.
    func openTransactionsSettled(within timeout: Duration = .seconds(5)) throws -> (count: Int, how: String) {
        let deadline = ContinuousClock.now + timeout
        var open = try openTransactions()
        while open.count > 0 && ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.1)
            open = try openTransactions()
        }
        return open
    }

    /// Whether the database is sound and unlocked after a crash: SQLite's `integrity_check`,
    /// then a free write lock and a full checkpoint; on PostgreSQL, whose server survives the
    /// application's crash, that the killed server's connections have gone and left no
    /// transaction open (waiting up to 5 seconds for the server to notice).
    func soundnessAfterCrash() throws -> String {
        if postgres == nil {
            let integrity = try RawDatabase(file.path).integrityCheck()
            guard integrity == "ok" else { return integrity }
        }
        let open = try openTransactionsSettled()
        return open.count == 0 ? "ok" : "\(open.count) transactions left open (\(open.how))"
    }
}
