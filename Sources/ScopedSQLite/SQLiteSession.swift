public import Scoped
public import ScopedDatabase

/// A request's unit of work on the database: a connection leased on first use, and a
/// transaction committed when the request's scope ends well and rolled back otherwise.
///
/// Read it from the scope with `try await ScopedValues.current.sqliteSession`. The scope's
/// `transactionMode` decides where it runs:
/// - `.readWrite` (the default): one `BEGIN IMMEDIATE` transaction on the writer for every
///   statement, so what the request read cannot change before it writes.
/// - `.readOnly` and `.readOnlySnapshot`: one read transaction on a reader (one snapshot: it
///   costs SQLite no round trip), never the write lock; a write fails with
///   ``SQLiteError/Code/readOnly``.
///
/// Statements of one session run one at a time, even from concurrent child tasks, each for at
/// most ``SQLiteConfiguration/statementTimeout``; the writer's run on the database's writer thread. Once its scope has
/// ended, the session refuses every statement with `ScopedError.scopeEnded(entry:)` and
/// leases nothing: a session kept past its scope by an unstructured task fails loudly instead of
/// holding a connection that nothing returns.
public final class SQLiteSession: Sendable {
    private let database: SQLiteDatabase
    private let lease: SessionLease<SQLiteConnection>

    /// How the session begins its transaction.
    public let mode: TransactionMode

    /// Creates a session on `database`; it leases nothing until its first statement.
    public init(database: SQLiteDatabase, mode: TransactionMode = .readWrite) {
        self.database = database
        self.mode = mode
        self.lease = SessionLease(entry: SQLiteSessionKey.name, turnTimeout: database.configuration.leaseTimeout)
    }

    /// Runs a query and returns its rows.
    public func query(_ sql: SQL) async throws -> [SQLiteRow] {
        try await withConnection(writing: false) { try $0.query(sql) }
    }

    /// Runs a query and decodes its rows into `T`.
    public func query<T: Decodable & Sendable>(_ sql: SQL, as type: T.Type) async throws -> [T] {
        try await withConnection(writing: false) { try $0.query(sql, as: type) }
    }

    /// Runs a query and returns the first column of its first row, if any.
    public func scalar<T: SQLiteBindable>(_ sql: SQL, as type: T.Type = T.self) async throws -> T? {
        try await withConnection(writing: false) { try $0.scalar(sql, as: type) }
    }

    /// Runs a writing statement in the session's write transaction; returns the rows changed.
    @discardableResult
    public func execute(_ sql: SQL) async throws -> Int {
        try await withConnection(writing: true) { try $0.execute(sql) }
    }

    /// Runs an `INSERT` in the session's write transaction; returns the new row's ID.
    public func insert(_ sql: SQL) async throws -> Int64 {
        try await withConnection(writing: true) { try $0.insert(sql) }
    }

    /// Whether the session holds a connection (and so an open transaction).
    public var isActive: Bool { lease.isActive }

    /// Whether the session holds the writer.
    public var isWriting: Bool {
        (try? lease.current())?.isWriter ?? false
    }

    private func withConnection<R: Sendable>(
        writing: Bool,
        _ body: (SQLiteConnection) throws -> R
    ) async throws -> R {
        if writing && mode.isReadOnly {
            throw SQLiteError(
                code: .readOnly,
                resultCode: 8,
                message: "\(lease.entry) is read-only: its scope set transactionMode = .\(mode)",
                sql: nil
            )
        }
        let turn = try await lease.takeTurn()
        defer { lease.endTurn(turn) }
        let connection = try await connection()
        return try await database.run(on: connection, operation: .statement, entry: lease.entry, body)
    }

    /// The session's connection for a statement, leased and its transaction begun on first
    /// use: the writer in `.readWrite`, a reader in a read-only mode; called in the session's turn.
    private func connection() async throws -> SQLiteConnection {
        if let connection = try lease.current() { return connection }
        let connection =
            mode.isReadOnly
            ? try await database.beginRead(entry: lease.entry)
            : try await database.beginWrite(entry: lease.entry)
        // Always stored: the session finishes only after the statement in its turn.
        _ = lease.store(connection)
        return connection
    }

    /// Ends the session: refuses later statements, waits for the one in flight, commits on
    /// success, rolls back otherwise, and always returns the connection.
    ///
    /// - Throws: the commit's error, after rolling back, when a successful scope's commit fails;
    ///   `DatabaseTimeoutError` when the commit or rollback ran past the statement timeout.
    public func finish(_ outcome: ScopeOutcome) async throws {
        guard let connection = await lease.finish().lease else { return }
        // A statement of the session ran out of time or was cancelled: its transaction is
        // rolled back with the connection, and a scope that ended well learns that nothing was
        // committed.
        guard !connection.wasInterrupted else {
            // Rolls back what it held; replaces the interrupted connection.
            database.release(connection)
            guard outcome.isSuccess else { return }
            throw DatabaseTimeoutError(
                operation: .statement,
                timeout: database.configuration.statementTimeout,
                entry: lease.entry
            )
        }
        // A reader's transaction only ends; the writer's commits or rolls back with the scope.
        let end: SQLiteConnection.TransactionCommand = connection.isWriter && !outcome.isSuccess ? .rollback : .commit
        // Ends the transaction and returns the connection (rolled back, should the commit fail).
        try await database.finish(connection, with: end, entry: lease.entry)
    }
}
