public import Logging
public import PostgresNIO
public import Scoped
public import ScopedDatabase
import Synchronization

/// A request's unit of work on PostgreSQL: a connection leased from the application's client
/// on first use, one transaction on it, committed when the scope ends well and rolled back
/// otherwise, and the connection returned either way.
///
/// A read-only session (`ScopedValues.transactionMode` `.readOnly`) on a database with a
/// ``PostgresDatabase/readClient`` sends no `BEGIN` and no `COMMIT`: it leases from the read
/// client, whose connections refuse every write, and each statement runs on its own. A read of
/// one row is then one round trip, as in code that uses postgres-nio's client directly.
/// `.readOnlySnapshot` runs its statements in one `REPEATABLE READ READ ONLY` transaction,
/// whose `COMMIT` is not waited for.
///
/// Read it from the scope with `try await ScopedValues.current.postgresSession`. Values are
/// always bound, never spliced: postgres-nio's `PostgresQuery` interpolation sends each
/// interpolated value as a parameter.
///
/// ```swift
/// let session = try await ScopedValues.current.postgresSession
/// let rows = try await session.query("SELECT id, title FROM movies WHERE id = \(id)")
/// ```
///
/// Statements of one session run one at a time, even from concurrent child tasks. After a
/// statement fails, PostgreSQL refuses the rest of the transaction; the session then rolls
/// back when it finishes, and a scope that ended well reports the failed commit.
///
/// Nothing waits forever: a connection not leased within
/// ``PostgresConfiguration/leaseTimeout``, or a statement, commit or rollback still running after
/// ``PostgresConfiguration/statementTimeout``, fails with `DatabaseTimeoutError`, and a
/// connection that ran out of time is closed, never returned in an unknown state. Once its scope
/// has ended, the session refuses every statement with
/// `ScopedError.scopeEnded(entry:)`.
public final class PostgresSession: Sendable {
    /// The leased connection and how to give it back.
    private struct Lease: Sendable {
        let connection: PostgresConnection
        /// Gives the connection back at once; `closing` says the session knows the connection is
        /// closing (a deadline closed it) even where postgres-nio does not say so yet.
        let release: @Sendable (_ closing: Bool) -> Void
        /// Delivered when the connection's owner has taken it back; `nil` where nothing waits.
        let returned: HandOver<Void>?
        /// The session runs in a savepoint of a test's transaction, not in a transaction of its own.
        let isSavepoint: Bool
        /// The read client the connection came from, which remembers its `search_path`.
        let readClient: PostgresReadClient?

        /// Gives the connection back, waiting at most a second for its owner to take it.
        func giveBack(_ closing: Bool) async {
            release(closing)
            _ = try? await returned?.value(within: .seconds(1)) { CancellationError() }
        }
    }

    /// Where the session's connection comes from.
    private enum Source: Sendable {
        /// The application's client, counted in its database's statistics when it has one.
        case client(PostgresClient, leases: PostgresLeaseCounter?)
        /// A database's read client, for a read-only session.
        case readClient(PostgresReadClient, leases: PostgresLeaseCounter)
        /// A test's connection (`.scoped(database: .postgres(…))`), in its transaction, for a
        /// scope of `tenant` or of none.
        case test(PostgresTestTransaction, tenant: TenantID?)
    }

    private let source: Source
    /// The schema the session's transaction reads and writes (a tenant's), set with
    /// `SET LOCAL search_path` as it begins; `nil` for the connection's default.
    private let schema: PostgresSchema?
    /// How the session begins its transaction.
    public let mode: TransactionMode
    private let logger: Logger
    private let leaseTimeout: Duration
    private let statementTimeout: Duration
    /// The session's turn, its lease and its end; `markAborted` when a statement fails, since
    /// PostgreSQL then refuses the rest of the transaction.
    private let state: SessionLease<Lease>
    /// Set when the session learns that its connection is closing: a deadline closed it, or a
    /// statement failed because the connection was lost.
    ///
    /// postgres-nio fails the statement in flight before its channel is inactive, so for a
    /// moment `isClosed` says `false` of a closing connection. Nothing more is sent on it (a
    /// rollback sent in that moment is dropped and waits for a deadline of its own), and it goes
    /// back to the pool only once its close has completed.
    private let knownClosing = Atomic<Bool>(false)

    /// Whether `connection` is closed, or closing as far as the session knows.
    private func isClosed(_ connection: PostgresConnection) -> Bool {
        connection.isClosed || knownClosing.load(ordering: .relaxed)
    }

    /// Creates a session on `client`; it leases nothing until its first statement.
    ///
    /// - Parameters:
    ///   - client: the application's client, which must be running.
    ///   - mode: how the transaction begins.
    ///   - logger: where postgres-nio logs the session's statements.
    ///   - leaseTimeout: how long to wait for a connection.
    ///   - statementTimeout: how long a statement, commit or rollback may run.
    public init(
        client: PostgresClient,
        mode: TransactionMode = .readWrite,
        logger: Logger,
        leaseTimeout: Duration = .seconds(5),
        statementTimeout: Duration = .seconds(10)
    ) {
        self.source = .client(client, leases: nil)
        self.schema = nil
        self.mode = mode
        self.logger = logger
        self.leaseTimeout = leaseTimeout
        self.statementTimeout = statementTimeout
        self.state = SessionLease(entry: PostgresSessionKey.name, turnTimeout: leaseTimeout)
    }

    /// Creates a session on `database`'s client, counted in its
    /// ``PostgresDatabase/statistics()`` while it holds a connection; it leases nothing until
    /// its first statement.
    ///
    /// On a tenant's database (``PostgresTenantDatabaseKey``) the session reads and writes the
    /// tenant's schema only. A transaction that may write begins with `SET LOCAL search_path`
    /// to it, which ends with the transaction, so the connection goes back to the pool as it
    /// came; a read-only session's connection, from the read client, is moved to the schema
    /// (once, at the session level) only when it is on another.
    ///
    /// - Parameters:
    ///   - database: the application's database, or a tenant's.
    ///   - mode: how the transaction begins.
    public init(database: PostgresDatabase, mode: TransactionMode = .readWrite) {
        if mode.isReadOnly, let readClient = database.readClient {
            self.source = .readClient(readClient, leases: database.leases)
        } else {
            self.source = .client(database.client, leases: database.leases)
        }
        self.schema = database.schema
        self.mode = mode
        self.logger = database.logger
        self.leaseTimeout = database.configuration.leaseTimeout
        self.statementTimeout = database.configuration.statementTimeout
        self.state = SessionLease(entry: PostgresSessionKey.name, turnTimeout: leaseTimeout)
    }

    /// A session on a test's connection, in a savepoint of the test's transaction; a session of
    /// `tenant` reads and writes the schema the test made for that tenant.
    init(test: PostgresTestTransaction, tenant: TenantID?, mode: TransactionMode) {
        self.source = .test(test, tenant: tenant)
        self.schema = nil
        self.mode = mode
        self.logger = Logger(label: "scoped.postgres.test", factory: { _ in SwiftLogNoOpLogHandler() })
        self.leaseTimeout = test.configuration.leaseTimeout
        self.statementTimeout = test.configuration.statementTimeout
        self.state = SessionLease(entry: PostgresSessionKey.name, turnTimeout: leaseTimeout)
    }

    /// Runs a statement in the session's transaction and returns its rows.
    ///
    /// - Parameter query: the statement, with its values bound by interpolation.
    /// - Returns: every row, read before the next statement may run.
    /// - Throws: ``PostgresDatabaseError`` for a database error.
    public func query(_ query: PostgresQuery) async throws -> [PostgresRow] {
        try await inTurn { connection in try await run(query, .statement, on: connection).rows }
    }

    /// Runs a prepared statement in the session and returns its rows decoded.
    ///
    /// A statement of fixed text (postgres-nio's `PostgresPreparedStatement`) is parsed and
    /// planned once per connection, on its first use there, and after that sent by name with its
    /// values: no parse and no plan per request. PostgreSQL plans it again by itself when the
    /// connection's `search_path` has changed since, so a tenant's session reads its own schema.
    ///
    /// ```swift
    /// struct ItemName: PostgresPreparedStatement {
    ///     static let sql = "SELECT name FROM items WHERE id = $1"
    ///     typealias Row = String
    ///     var id: Int
    ///     func makeBindings() -> PostgresBindings {
    ///         var bindings = PostgresBindings()
    ///         bindings.append(id)
    ///         return bindings
    ///     }
    ///     func decodeRow(_ row: PostgresRow) throws -> String { try row.decode(String.self) }
    /// }
    /// let names = try await session.query(ItemName(id: 1))
    /// ```
    ///
    /// Past ``PostgresConfiguration/statementTimeout`` the connection is closed, which fails the
    /// statement. Through PgBouncer, use transaction pooling only from version 1.21 on, with
    /// `max_prepared_statements` set: earlier versions do not carry a connection's prepared
    /// statements over to the server connection that runs the next statement.
    ///
    /// - Parameter statement: the statement, with its values.
    /// - Returns: every row, decoded by the statement.
    /// - Throws: ``PostgresDatabaseError`` for a database error, or what decoding throws.
    public func query<Statement: PostgresPreparedStatement>(
        _ statement: Statement
    ) async throws -> [Statement.Row] where Statement.Row: Sendable {
        try await inTurn { connection in
            try await withDeadline(.statement, on: connection) {
                var rows: [Statement.Row] = []
                for try await row in try await connection.execute(statement, logger: logger) { rows.append(row) }
                return rows
            }
        }
    }

    /// Runs a statement in the session's transaction and hands its rows to `body` as they
    /// arrive, for results too large to hold at once.
    ///
    /// ```swift
    /// let total = try await session.query("SELECT id, title FROM movies") { rows in
    ///     var count = 0
    ///     for try await (id, title) in rows.decode((Int, String).self) { count += 1 }
    ///     return count
    /// }
    /// ```
    ///
    /// No other statement of the session runs until `body` returns; the rows must not outlive it.
    ///
    /// - Parameters:
    ///   - query: the statement, with its values bound by interpolation.
    ///   - body: reads the rows.
    /// - Returns: what `body` returns.
    /// - Throws: ``PostgresDatabaseError`` for a database error, or what `body` throws.
    public func query<R: Sendable>(
        _ query: PostgresQuery,
        rows body: (PostgresRowSequence) async throws -> R
    ) async throws -> R {
        try await withConnection { connection in
            try await body(try await connection.query(query, logger: logger))
        }
    }

    /// Runs a writing statement in the session's transaction; returns the rows it changed.
    ///
    /// - Parameter query: the statement, with its values bound by interpolation.
    /// - Returns: the row count of PostgreSQL's command tag (`UPDATE 3` is 3), or 0 for a
    ///   statement that reports none.
    /// - Throws: ``PostgresDatabaseError`` for a database error.
    @discardableResult
    public func execute(_ query: PostgresQuery) async throws -> Int {
        try await inTurn { connection in try await run(query, .statement, on: connection).metadata.rows ?? 0 }
    }

    /// Runs `body` with the session's connection, inside its transaction, while no other
    /// statement of the session runs.
    ///
    /// - Parameter body: uses the connection; it must not keep it, nor end the transaction.
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws, database errors as ``PostgresDatabaseError``.
    ///
    /// At the statement timeout the connection is closed, which fails what `body` waits for
    /// from the server. (``query(_:)->[PostgresRow]`` and ``execute(_:)`` also stop waiting for a statement the
    /// driver never completes; a `body` of the caller's cannot be abandoned that way.)
    public func withConnection<R: Sendable>(_ body: (PostgresConnection) async throws -> R) async throws -> R {
        try await inTurn { connection in
            try await withDeadline(.statement, on: connection) { try await body(connection) }
        }
    }

    /// Runs `body` with the session's connection, its transaction begun, while no other
    /// statement of the session runs; a database error or a timeout marks the transaction
    /// aborted.
    private func inTurn<R: Sendable>(_ body: (PostgresConnection) async throws -> R) async throws -> R {
        let turn = try await state.takeTurn()
        defer { state.endTurn(turn) }
        let connection = try await leasedConnection()
        // postgres-nio drops a statement written to a connection the server has closed
        // without failing it, and its caller would wait forever: refuse it here instead.
        guard !isClosed(connection) else {
            state.markAborted()
            throw PostgresDatabaseError.connectionClosed
        }
        do {
            return try await body(connection)
        } catch {
            let classified = PostgresDatabaseError.classify(error)
            if classified is PostgresDatabaseError || classified is DatabaseTimeoutError {
                state.markAborted()
            }
            if (classified as? PostgresDatabaseError)?.kind == .connectionLost {
                knownClosing.store(true, ordering: .relaxed)
            }
            throw classified
        }
    }

    /// Runs `query` on `connection` and returns its result, waiting for it until the statement
    /// timeout: then `connection` is closed, failing what the statement waits for; and if it
    /// still has not completed a second later, it is abandoned, and this throws
    /// `DatabaseTimeoutError`.
    ///
    /// postgres-nio may never complete a statement written to a connection that is closing
    /// (the server restarted, say), and closing it again fails nothing: without this, the
    /// request, its scope and its lease would wait for ever. The wait is a continuation that the
    /// statement's future or its deadline on the watchdog resumes, whichever comes first: no
    /// task, no timer. A commit or rollback runs to its end in a cancelled scope too (a session
    /// closes inline, in its scope's task); only its deadline ends it.
    private func run(
        _ query: PostgresQuery,
        _ operation: DatabaseTimeoutError.Operation,
        on connection: PostgresConnection
    ) async throws -> PostgresQueryResult {
        let (timeout, entry, logger) = (statementTimeout, state.entry, logger)
        // The deadline ends with the statement, on the event loop that completes it: the task's
        // wait for a cooperative thread afterwards is no part of it. (Ended after the task
        // resumed, a deadline that passed during that wait, on a loaded machine, closed a
        // connection whose statement had finished.)
        let watchdog = DeadlineWatchdog.shared
        let deadline = watchdog.register(after: timeout) { [self] in
            knownClosing.store(true, ordering: .relaxed)
            // The future-returning `close()`: it closes the channel at once, failing what waits
            // on it, without waiting for the server.
            let closing: EventLoopFuture<Void> = connection.close()
            _ = closing
        }
        let ended = HandOver<(Result<PostgresQueryResult, any Error>, expired: Bool)>()
        // The future-returning `query`: its result carries the command tag's row count.
        let statement: EventLoopFuture<PostgresQueryResult> = connection.query(query, logger: logger)
        statement.whenComplete { result in ended.deliver(.success((result, !watchdog.cancel(deadline)))) }
        // postgres-nio writes the statement with no promise of its own: written to a channel that
        // closed (an idle connection whose server restarted), it is dropped and never completes.
        // Seen closed now, after the write was queued, the statement cannot succeed: the write
        // is dropped, or the close fails it, or it completed before the close and that result,
        // delivered on the event loop before the channel went inactive, came first. (A close
        // between this check and the write's turn on the event loop still ends at the deadline.)
        if connection.isClosed {
            ended.deliver(.success((.failure(PostgresDatabaseError.connectionClosed), !watchdog.cancel(deadline))))
        }
        // Past its deadline the connection was closed; a statement that still has not failed
        // after that grace is abandoned.
        let (result, expired) = try await ended.value(within: timeout + Self.abandonGrace) {
            DatabaseTimeoutError(operation: operation, timeout: timeout, entry: entry)
        }
        if expired, case .failure = result {
            throw DatabaseTimeoutError(operation: operation, timeout: timeout, entry: entry)
        }
        return try result.get()
    }

    /// How long past its deadline a statement whose connection was closed may take to notice,
    /// before it is abandoned.
    private static let abandonGrace = Duration.seconds(1)

    /// Runs `body`, closing `connection` if it is still running after the statement timeout:
    /// what it waits for then fails, whether the server answers or not.
    private func withDeadline<R>(
        _ operation: DatabaseTimeoutError.Operation,
        on connection: PostgresConnection,
        _ body: () async throws -> R
    ) async throws -> R {
        try await DeadlineWatchdog.shared.run(
            within: statementTimeout,
            operation: operation,
            entry: state.entry,
            expire: { [self] in
                knownClosing.store(true, ordering: .relaxed)
                // The future-returning `close()`: it closes the channel at once, failing what
                // waits on it, without waiting for the server.
                let closing: EventLoopFuture<Void> = connection.close()
                _ = closing
            },
            body
        )
    }

    /// The connection, leased and its transaction begun on first use.
    private func leasedConnection() async throws -> PostgresConnection {
        if let current = try state.current() { return current.connection }
        let lease: Lease
        switch source {
        case .client(let client, let leases):
            lease = try await Self.lease(from: client, counting: leases, within: leaseTimeout, entry: state.entry)
        case .readClient(let readClient, let leases):
            lease = try await Self.lease(
                from: readClient.client,
                counting: leases,
                within: leaseTimeout,
                entry: state.entry,
                readClient: readClient
            )
        case .test(let test, _):
            let timeout = leaseTimeout
            let entry = state.entry
            let permit = try await test.turn.acquire(waitingAtMost: timeout) {
                DatabaseTimeoutError(operation: .lease, timeout: timeout, entry: entry)
            }
            lease = Lease(
                connection: test.connection,
                release: { _ in test.turn.release(permit) },
                returned: nil,
                isSavepoint: true,
                readClient: nil
            )
        }
        do {
            if let readClient = lease.readClient {
                try await moveSearchPath(of: lease.connection, in: readClient.schemas)
            }
            var statements = beginning(lease)
            if case .test(let test, let tenant) = source,
                let searchPath = try await test.searchPath(for: tenant, logger: logger)
            {
                statements.append(searchPath)
            }
            for statement in statements { _ = try await run(statement, .statement, on: lease.connection) }
        } catch {
            await lease.giveBack(isClosed(lease.connection))
            throw PostgresDatabaseError.classify(error)
        }
        if !state.store(lease) {
            for statement in ending(lease, commit: false) {
                _ = try? await run(statement, .finish, on: lease.connection)
            }
            await lease.giveBack(isClosed(lease.connection))
            throw ScopedError.scopeEnded(entry: state.entry)
        }
        return lease.connection
    }

    /// Sets the `search_path` of `connection`, a read client's, to the session's schema, unless
    /// `schemas` knows it is there already.
    ///
    /// Until the statement has answered, the connection's place is unknown: a statement that
    /// failed or ran out of time leaves it so, and the next session on it sets it again.
    private func moveSearchPath(of connection: PostgresConnection, in schemas: ConnectionSchemas) async throws {
        let wanted = ConnectionSchemas.Place(schema)
        guard schemas.place(of: connection.id) != wanted else { return }
        schemas.record(.unknown, for: connection)
        _ = try await run(schema?.setSearchPath ?? "RESET search_path", .statement, on: connection)
        schemas.record(wanted, for: connection)
    }

    /// Whether the session's statements run on their own, in no transaction of the session's.
    private func isAutocommit(_ lease: Lease) -> Bool {
        lease.readClient != nil && mode == .readOnly
    }

    /// The statements that begin the session's transaction on `lease`.
    private func beginning(_ lease: Lease) -> [PostgresQuery] {
        // Set inside the savepoint, so that rolling back to it unsets it.
        if lease.isSavepoint {
            return mode.isReadOnly
                ? ["SAVEPOINT scoped_session", "SET LOCAL transaction_read_only = on"] : ["SAVEPOINT scoped_session"]
        }
        // A read client's connection is on the schema already (`moveSearchPath`), and read-only.
        if lease.readClient != nil {
            return mode == .readOnlySnapshot ? ["BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"] : []
        }
        let begin: PostgresQuery =
            switch mode {
            case .readOnly: "BEGIN READ ONLY"
            case .readOnlySnapshot: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
            case .readWrite: "BEGIN"
            }
        return [begin] + (schema.map { [$0.setLocalSearchPath] } ?? [])
    }

    /// The statements that end the session's transaction on `lease`, committing it or not.
    private func ending(_ lease: Lease, commit: Bool) -> [PostgresQuery] {
        if isAutocommit(lease) { return [] }
        guard lease.isSavepoint else { return [commit ? "COMMIT" : "ROLLBACK"] }
        // A read-only savepoint is always rolled back to, which also unsets its read-only mode.
        if commit && mode == .readWrite { return ["RELEASE SAVEPOINT scoped_session"] }
        return ["ROLLBACK TO SAVEPOINT scoped_session", "RELEASE SAVEPOINT scoped_session"]
    }

    /// Leases a connection for as long as the returned lease is not released: a task holds
    /// postgres-nio's `withConnection` open until then.
    ///
    /// - Throws: `DatabaseTimeoutError` when no connection came within `timeout`, the server
    ///   reachable or not; the lease, if it comes later, is returned at once.
    private static func lease(
        from client: PostgresClient,
        counting leases: PostgresLeaseCounter?,
        within timeout: Duration,
        entry: String,
        readClient: PostgresReadClient? = nil
    ) async throws -> Lease {
        let handOver = HandOver<(PostgresConnection, CheckedContinuation<Void, Never>)>()
        // Delivered when postgres-nio has taken the connection back.
        let returned = HandOver<Void>()
        let leasing = Task {
            do {
                try await client.withConnection { connection in
                    leases?.add(1)
                    defer { leases?.add(-1) }
                    await withCheckedContinuation { release in
                        // Refused when the session stopped waiting: the connection goes back.
                        if !handOver.deliver(.success((connection, release))) { release.resume() }
                    }
                }
            } catch {
                handOver.deliver(.failure(PostgresDatabaseError.classify(error)))
            }
            returned.deliver(.success(()))
        }
        let (connection, release): (PostgresConnection, CheckedContinuation<Void, Never>) =
            try await DeadlineWatchdog.shared.run(
                within: timeout,
                operation: .lease,
                entry: entry,
                expire: {
                    handOver.deliver(.failure(CancellationError()))
                    leasing.cancel()
                }
            ) {
                try await withTaskCancellationHandler {
                    try await handOver.value()
                } onCancel: {
                    handOver.deliver(.failure(CancellationError()))
                    leasing.cancel()
                }
            }
        // Returns the connection to the client; `Lease.giveBack` waits at most a second for the
        // client to take it back: a client that does not answer cannot hold the scope.
        let giveBack: @Sendable (Bool) -> Void = { closing in
            if closing || connection.isClosed {
                // A connection that is closing (a deadline closed it, or the server went away)
                // goes back once its close has completed, however long that takes: the client's
                // pool learns of a close only then, and given back before, the connection would be
                // idle to it, leased to the next session, and a closing connection never completes
                // a statement. `isClosed` alone does not say so: postgres-nio fails the statement
                // in flight before the channel is inactive, and an event loop that is late runs
                // the close later still (the next scope once leased the closing connection and
                // failed with `clientClosedConnection`). Closed here too, so that a connection
                // whose state the session no longer knows never goes back open.
                let close: EventLoopFuture<Void> = connection.close()
                _ = close
                connection.closeFuture.whenComplete { _ in release.resume() }
            } else {
                release.resume()
            }
        }
        return Lease(
            connection: connection,
            release: giveBack,
            returned: returned,
            isSavepoint: false,
            readClient: readClient
        )
    }

    /// Ends the session: commits on success, rolls back otherwise, and returns the connection.
    ///
    /// The commit or rollback is not cancelled with the scope's task (see `run`), so that a
    /// cancelled scope still rolls back. A session whose statements ran on their own
    /// (`.readOnly` on the read client) sends nothing; a `.readOnlySnapshot` one on the read
    /// client sends its `COMMIT` and returns without waiting for it (see `commitWithoutWaiting`).
    ///
    /// - Parameter outcome: how the session's scope ended.
    /// - Throws: ``PostgresDatabaseError`` when the commit failed, or when a statement failed
    ///   earlier and the transaction was rolled back instead.
    public func finish(_ outcome: ScopeOutcome) async throws {
        // Refuses later statements and waits for the one in flight: the commit never runs on
        // the connection at the same time as a statement.
        let (lease, isAborted) = await state.finish()
        guard let lease else { return }
        let connection = lease.connection
        if isAutocommit(lease) {
            // Each statement committed (or failed) on its own: there is nothing to end.
            await lease.giveBack(isClosed(connection))
            return
        }
        if let readClient = lease.readClient, !isClosed(connection) {
            commitWithoutWaiting(lease, counting: readClient)
            return
        }
        // `run` follows no cancellation, so that a cancelled scope still rolls back.
        let ended: Result<Void, any Error>
        if isClosed(connection) {
            ended = .failure(PostgresDatabaseError.connectionClosed)
        } else {
            do {
                for statement in ending(lease, commit: outcome.isSuccess && !isAborted) {
                    _ = try await run(statement, .finish, on: connection)
                }
                ended = .success(())
            } catch {
                ended = .failure(PostgresDatabaseError.classify(error))
            }
        }
        await lease.giveBack(isClosed(connection))
        try ended.get()
        if outcome.isSuccess && isAborted {
            throw PostgresDatabaseError(
                kind: .other,
                sqlState: "25P02",
                message: "a statement of the transaction failed: it was rolled back, not committed",
                constraint: nil
            )
        }
    }

    /// Sends the `COMMIT` of a read-only transaction on `lease` and returns at once: the
    /// connection goes back to the pool when the `COMMIT` answers, or is closed and given back
    /// when it has not answered by the statement timeout.
    ///
    /// A read-only transaction wrote nothing, so its `COMMIT` decides nothing: its scope's
    /// response need not wait for it. One that fails is logged and counted in
    /// ``PostgresDatabase/Statistics/failedReadOnlyCommits``; its connection is closed, never
    /// returned in a state the session does not know.
    private func commitWithoutWaiting(_ lease: Lease, counting readClient: PostgresReadClient) {
        let connection = lease.connection
        let (logger, timeout) = (logger, statementTimeout)
        // The first of the `COMMIT`'s answer and its deadline gives the connection back.
        let ended = HandOver<Void>()
        let watchdog = DeadlineWatchdog.shared
        let deadline = watchdog.register(after: timeout) {
            guard ended.deliver(.success(())) else { return }
            readClient.failedCommits.add(1, ordering: .relaxed)
            logger.warning(
                "a read-only COMMIT did not answer within \(timeout): its connection is closed",
                metadata: ["entry": "\(PostgresSessionKey.name)"]
            )
            lease.release(true)
        }
        let commit: EventLoopFuture<PostgresQueryResult> = connection.query("COMMIT", logger: logger)
        commit.whenComplete { result in
            watchdog.cancel(deadline)
            guard ended.deliver(.success(())) else { return }
            if case .failure(let error) = result {
                readClient.failedCommits.add(1, ordering: .relaxed)
                logger.warning(
                    "a read-only COMMIT failed after its scope ended: its connection is closed",
                    metadata: [
                        "entry": "\(PostgresSessionKey.name)", "error": "\(PostgresDatabaseError.classify(error))",
                    ]
                )
                lease.release(true)
            } else {
                lease.release(connection.isClosed)
            }
        }
        // A `COMMIT` written to a channel that closed meanwhile is dropped and never answers:
        // seen closed now, the connection goes back as it closes.
        if connection.isClosed, ended.deliver(.success(())) {
            watchdog.cancel(deadline)
            readClient.failedCommits.add(1, ordering: .relaxed)
            lease.release(true)
        }
    }
}
