import CSQLite
import Foundation
import Scoped
import ScopedDatabase
import Synchronization

/// A SQLite database file in WAL mode: one writer connection and a pool of readers.
///
/// Open it once per application (it is the ``SQLiteDatabaseKey`` app service), read and write
/// through a request's ``SQLiteSession``, and ``close()`` it at shutdown. Waiting for a
/// connection suspends the task, for at most ``SQLiteConfiguration/leaseTimeout``. A session's
/// writer statements and commits run on the database's own writer thread, never on Swift's
/// cooperative pool, so a commit waiting for the disk holds no thread that other requests
/// need; readers' statements, which sync nothing, run where their task runs. The thread starts
/// when the database opens and stops when it closes.
public final class SQLiteDatabase: Sendable {
    /// How the database was opened.
    public let configuration: SQLiteConfiguration
    private let writers: AsyncPool<SQLiteConnection>
    private let readerPool: AsyncPool<SQLiteConnection>
    /// Where the writer's statements and commits run: this database's own thread.
    let writerThread: SQLiteWriterThread

    /// Opens (or creates) the database, applies its configuration and runs its migrations, on
    /// the calling thread.
    ///
    /// Opening writes and syncs the file, which on a busy disk can take seconds: from async
    /// code, use ``open(_:)``, which holds no thread of Swift's cooperative pool meanwhile.
    ///
    /// - Throws: ``SQLiteError`` naming the file when it cannot be opened (``SQLiteError/Code/cantOpen``)
    ///   or is not a database (``SQLiteError/Code/corrupt``); ``SQLiteMigrationError`` when a
    ///   migration fails.
    public convenience init(_ configuration: SQLiteConfiguration) throws {
        try self.init(configuration, closesWithItsRoot: true)
    }

    /// Opens (or creates) the database as ``init(_:)`` does, on a thread of its own: the task
    /// waits without holding one of the cooperative threads that other tasks need.
    ///
    /// - Throws: what ``init(_:)`` throws.
    public static func open(_ configuration: SQLiteConfiguration) async throws -> SQLiteDatabase {
        try await opening(configuration, closesWithItsRoot: true)
    }

    /// ``open(_:)``, for a database that a root closes or not (see `closesWithItsRoot`).
    static func opening(_ configuration: SQLiteConfiguration, closesWithItsRoot: Bool) async throws -> SQLiteDatabase {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(
                    with: Result { try SQLiteDatabase(configuration, closesWithItsRoot: closesWithItsRoot) }
                )
            }
            .start()
        }
    }

    /// Whether a root that read it as `sqliteDatabase` closes it at shutdown: not when a test
    /// lent it (``SQLiteTestDatabase``), which closes it itself.
    let closesWithItsRoot: Bool

    init(_ configuration: SQLiteConfiguration, closesWithItsRoot: Bool) throws {
        self.configuration = configuration
        self.closesWithItsRoot = closesWithItsRoot
        let path = configuration.path
        if !configuration.readOnly {
            let folder = URL(filePath: path).deletingLastPathComponent()
            do {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            } catch {
                throw SQLiteError(
                    code: .cantOpen,
                    resultCode: SQLITE_CANTOPEN,
                    message:
                        "Cannot create the folder \(folder.path) for the database \(path): \(error.localizedDescription)",
                    sql: nil
                )
            }
        }
        let flags = configuration.readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
        let writer = try Self.open(path, flags: flags, configuration: configuration, isWriter: true)
        if !configuration.readOnly {
            try Self.migrate(writer, to: configuration.migrations)
        }
        // Opened and migrated, waiting for another instance on the same file as SQLite's busy
        // handler does; from now on the writer's own retry (`beginImmediate`) waits, without
        // blocking a thread.
        writer.setBusyTimeout(.zero)
        var readers: [SQLiteConnection] = []
        for _ in 0..<max(1, configuration.readers) {
            readers.append(
                try Self.open(path, flags: SQLITE_OPEN_READONLY, configuration: configuration, isWriter: false)
            )
        }
        writers = AsyncPool([writer], closedError: SQLiteDatabaseClosedError.init)
        readerPool = AsyncPool(readers, closedError: SQLiteDatabaseClosedError.init)
        writerThread = SQLiteWriterThread()
    }

    /// The name of the database's writer thread, as the system shows it.
    var writerThreadName: String { writerThread.name }

    /// Stops the writer's thread of a database that was never closed.
    deinit {
        writerThread.stop()
    }

    private static func open(
        _ path: String,
        flags: Int32,
        configuration: SQLiteConfiguration,
        isWriter: Bool
    ) throws -> SQLiteConnection {
        let connection: SQLiteConnection
        do {
            connection = try SQLiteConnection(path: path, flags: flags, isWriter: isWriter)
            // Instances that open one file at once wait for each other's WAL switch and migrations.
            connection.setBusyTimeout(configuration.busyTimeout)
        } catch let error as SQLiteError {
            throw SQLiteError(
                code: error.code,
                resultCode: error.resultCode,
                message: "\(error.message): \(path)",
                sql: nil
            )
        }
        do {
            if isWriter && !configuration.readOnly {
                let mode: String? = try connection.scalar("PRAGMA journal_mode = WAL")
                guard mode?.lowercased() == "wal" else {
                    throw SQLiteError(
                        code: .other(SQLITE_ERROR),
                        resultCode: SQLITE_ERROR,
                        message: "Could not enable WAL mode (journal_mode is \(mode ?? "unknown")): \(path)",
                        sql: "PRAGMA journal_mode = WAL"
                    )
                }
            } else {
                // Reading the schema now turns "not a database" into an error at open.
                _ = try connection.scalar("SELECT count(*) FROM sqlite_master", as: Int.self)
            }
            // `synchronous` must be set after WAL is enabled: it is remembered per journal mode.
            try connection.executeScript(configuration.synchronous.pragmaStatement)
            try connection.executeScript("PRAGMA foreign_keys = ON;")
            if !isWriter { connection.setBusyTimeout(.zero) }
        } catch let error as SQLiteError {
            connection.close()
            throw SQLiteError(
                code: error.code,
                resultCode: error.resultCode,
                message: "\(error.message): \(path)",
                sql: error.sql
            )
        }
        return connection
    }

    private static func migrate(_ connection: SQLiteConnection, to migrations: [SQLiteMigration]) throws {
        var version = try connection.scalar("PRAGMA user_version", as: Int.self) ?? 0
        for migration in migrations.sorted(by: { $0.version < $1.version }) where migration.version > version {
            do {
                try connection.transaction(.beginImmediate)
                // Under the write lock: another instance on the file may have applied it meanwhile.
                version = try connection.scalar("PRAGMA user_version", as: Int.self) ?? 0
                guard migration.version > version else {
                    try connection.transaction(.commit)
                    continue
                }
                for migrationStatement in migration.statements { try connection.executeScript(migrationStatement) }
                // PRAGMA takes no bound parameters; the version is an integer from code.
                try connection.executeScript("PRAGMA user_version = \(migration.version)")
                try connection.transaction(.commit)
                version = migration.version
            } catch {
                try? connection.transaction(.rollback)
                throw SQLiteMigrationError(
                    version: migration.version,
                    name: migration.name,
                    currentVersion: version,
                    underlying: error
                )
            }
        }
    }

    /// The schema version recorded in the file (`PRAGMA user_version`).
    public func schemaVersion() async throws -> Int {
        try await read { try $0.scalar("PRAGMA user_version", as: Int.self) ?? 0 }
    }

    /// Runs `body` on a reader connection inside one read transaction: a consistent snapshot.
    ///
    /// `body` runs where the caller runs, as a session's reads do, and is interrupted after
    /// ``SQLiteConfiguration/statementTimeout`` or when the task is cancelled.
    ///
    /// - Throws: `DatabaseTimeoutError` when it was interrupted; what `body` throws.
    public func read<R: Sendable>(_ body: (borrowing SQLiteTransaction) throws -> R) async throws -> R {
        let entry = SQLiteDatabaseKey.name
        let connection = try await beginRead(entry: entry)
        defer {
            try? connection.transaction(.commit)
            release(connection)
        }
        return try await run(on: connection, operation: .statement, entry: entry) { connection in
            // Bound to a name first: Swift 6.3.1's optimizer crashes (signal 6, "Cannot initialize a
            // nonCopyable type with a guaranteed value") inlining the temporary passed as `borrowing`.
            let transaction = SQLiteTransaction(connection)
            return try body(transaction)
        }
    }

    /// Runs `body` on the writer connection inside one `BEGIN IMMEDIATE` transaction: committed
    /// when it returns, rolled back when it throws.
    ///
    /// `body` and the commit run on the database's writer thread, as a session's writes do, and
    /// are interrupted together after ``SQLiteConfiguration/statementTimeout`` or when the task
    /// is cancelled.
    ///
    /// - Throws: `DatabaseTimeoutError` when it was interrupted; what `body` or the commit
    ///   throws.
    public func write<R: Sendable>(_ body: (borrowing SQLiteTransaction) throws -> R) async throws -> R {
        let entry = SQLiteDatabaseKey.name
        let connection = try await beginWrite(entry: entry)
        defer { release(connection) }  // Rolls back whatever did not commit.
        return try await run(on: connection, operation: .statement, entry: entry) { connection in
            let transaction = SQLiteTransaction(connection)
            let result = try body(transaction)
            try connection.transaction(.commit)
            return result
        }
    }

    /// Leases a reader and begins a read transaction on it; the caller ends the transaction
    /// and returns the connection with ``release(_:)``.
    func beginRead(entry: String = SQLiteSessionKey.name) async throws -> SQLiteConnection {
        let connection = try await lease(from: readerPool, entry: entry)
        do {
            try connection.transaction(.begin)
            return connection
        } catch {
            readerPool.release(connection)
            throw error
        }
    }

    /// Leases the writer and begins a `BEGIN IMMEDIATE` transaction on it; the caller ends the
    /// transaction and returns the connection with ``release(_:)``.
    func beginWrite(entry: String = SQLiteSessionKey.name) async throws -> SQLiteConnection {
        let connection = try await lease(from: writers, entry: entry)
        do {
            try await beginImmediate(on: connection)
            return connection
        } catch {
            writers.release(connection)
            throw error
        }
    }

    /// Starts a write transaction, retrying asynchronously while another process holds the
    /// write lock, for at most ``SQLiteConfiguration/busyTimeout``.
    private func beginImmediate(on connection: SQLiteConnection) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: configuration.busyTimeout)
        var pause = Duration.milliseconds(1)
        while true {
            do {
                try connection.transaction(.beginImmediate)
                return
            } catch let error as SQLiteError where error.code == .busy && clock.now < deadline {
                try await Task.sleep(for: pause)
                pause = min(pause * 2, .milliseconds(50))
            }
        }
    }

    /// A connection from `pool`, waiting at most ``SQLiteConfiguration/leaseTimeout``.
    private func lease(from pool: AsyncPool<SQLiteConnection>, entry: String) async throws -> SQLiteConnection {
        let timeout = configuration.leaseTimeout
        return try await pool.acquire(waitingAtMost: timeout) {
            DatabaseTimeoutError(operation: .lease, timeout: timeout, entry: entry)
        }
    }

    /// Runs `body` with `connection`, interrupting it after
    /// ``SQLiteConfiguration/statementTimeout``, or when the task is cancelled (except for the
    /// `.finish` operation, which a cancelled scope still needs).
    ///
    /// On the writer, where statements wait for the write lock and commits for the disk's
    /// `fsync`, it runs on the database's writer thread. On a reader, which syncs nothing, it runs where
    /// the caller runs: a point read costs microseconds, and the hop to another thread and back
    /// measured 35 times that.
    ///
    /// - Throws: ``DatabaseTimeoutError`` when it was interrupted; what `body` throws.
    func run<R: Sendable>(
        on connection: SQLiteConnection,
        operation: DatabaseTimeoutError.Operation,
        entry: String,
        _ body: (SQLiteConnection) throws -> R
    ) async throws -> R {
        // A cancelled request (its client went away) stops its statement too. The commit or
        // rollback runs to its end whether the closing task was cancelled or not (a scope's close
        // runs inline in it): only its deadline interrupts it.
        let followsCancellation = operation != .finish
        func unlessInterrupted() throws -> R {
            try throwIfInterrupted(
                connection,
                operation: operation,
                entry: entry,
                followingCancellation: followsCancellation
            )
            return try body(connection)
        }
        let timeout = configuration.statementTimeout
        guard connection.isWriter else {
            // A reader's statement runs here, on the caller's thread: its deadline ends with it.
            return try await DeadlineWatchdog.shared.run(
                within: timeout,
                operation: operation,
                entry: entry,
                expire: { connection.interrupt() }
            ) {
                guard followsCancellation else { return try unlessInterrupted() }
                return try await withTaskCancellationHandler {
                    try unlessInterrupted()
                } onCancel: {
                    connection.interrupt()
                }
            }
        }
        // A writer's statement runs on the writer thread, and its deadline is cancelled there, as
        // the statement ends: the task's wait for a thread to resume on afterwards is no part
        // of it. (Cancelled after the resumption, a deadline that passed during a long wait, on
        // a loaded machine, interrupted a connection whose statement had finished, and the
        // transaction was lost.)
        let watchdog = DeadlineWatchdog.shared
        let deadline = watchdog.register(after: timeout) { connection.interrupt() }
        func statement() async throws -> (Result<R, any Error>, expired: Bool) {
            try await writerThread.run {
                let result = Result { try unlessInterrupted() }
                return (result, !watchdog.cancel(deadline))
            }
        }
        let (result, expired): (Result<R, any Error>, expired: Bool)
        do {
            if followsCancellation {
                (result, expired) = try await withTaskCancellationHandler {
                    try await statement()
                } onCancel: {
                    connection.interrupt()
                }
            } else {
                (result, expired) = try await statement()
            }
        } catch {
            watchdog.cancel(deadline)
            throw error
        }
        if expired, case .failure = result {
            throw DatabaseTimeoutError(operation: operation, timeout: timeout, entry: entry)
        }
        return try result.get()
    }

    /// Ends the transaction on `connection` with `end` (a commit or a rollback), under the
    /// statement timeout, and returns the connection to its pool.
    ///
    /// On the writer, both run in one call on the writer thread: the next session gets the
    /// writer as soon as the commit's `fsync` returns, not once this task has waited for a
    /// cooperative thread again. Under a load of reads that wait was most of a write's time (the
    /// reliability suite's `reload`: 32 readers beside 32 writers). The deadline interrupts the
    /// commit and ends the wait for it: a commit that the disk holds (a write or an `fsync` that
    /// does not return, where no interrupt reaches) keeps the writer until the disk answers, and
    /// its session learns at the deadline that it ran out of time, with no task or timer of its own.
    ///
    /// - Throws: ``DatabaseTimeoutError`` when the deadline passed first; what SQLite reported.
    func finish(_ connection: SQLiteConnection, with end: SQLiteConnection.TransactionCommand, entry: String)
        async throws
    {
        guard connection.isWriter else {
            do {
                try await run(on: connection, operation: .finish, entry: entry) { try $0.transaction(end) }
            } catch {
                release(connection)
                throw error
            }
            release(connection)
            await giveWayToAWriteInFlight()
            return
        }
        let timeout = configuration.statementTimeout
        let watchdog = DeadlineWatchdog.shared
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let waiter = CommitWaiter(continuation)
            let timedOut = DatabaseTimeoutError(operation: .finish, timeout: timeout, entry: entry)
            let deadline = watchdog.register(after: timeout) {
                connection.interrupt()
                waiter.resume(with: .failure(timedOut))
            }
            writerThread.submit {
                let result = Result<Void, any Error> {
                    try self.throwIfInterrupted(
                        connection,
                        operation: .finish,
                        entry: entry,
                        followingCancellation: false
                    )
                    try connection.transaction(end)
                }
                // Released only once the deadline can no longer interrupt it (an interrupt after
                // the release would stop the next session's statement), or once it has: then the
                // connection is closed and replaced.
                let inTime = watchdog.cancel(deadline)
                self.release(connection)
                waiter.resume(with: inTime ? result : .failure(timedOut))
            }
        }
    }

    /// Lets the tasks waiting for a cooperative thread run first while a session holds the
    /// writer: a reader's session ends with one yield then, and with none otherwise.
    ///
    /// A write holds the one writer across each of its waits for a thread to resume on, between
    /// its statements and before its commit. Read requests that end with no suspension run in
    /// longer jobs, and under a load of reads those waits were most of a write's time: in the
    /// reliability suite's `reload` (32 readers beside 32 writers), about one write in ten
    /// waited past its lease timeout when readers closed inline with no yield.
    private func giveWayToAWriteInFlight() async {
        if writers.availableCount == 0 { await Task.yield() }
    }

    /// Throws when `connection` was interrupted before `operation` began.
    ///
    /// `sqlite3_interrupt` reaches only a running statement, and an earlier statement's deadline
    /// may have fired as that statement returned. The transaction is lost all the same: the
    /// session ran out of time, or, `followingCancellation`, its task was cancelled.
    private func throwIfInterrupted(
        _ connection: SQLiteConnection,
        operation: DatabaseTimeoutError.Operation,
        entry: String,
        followingCancellation: Bool
    ) throws {
        guard connection.wasInterrupted else { return }
        if followingCancellation && Task.isCancelled { throw CancellationError() }
        throw DatabaseTimeoutError(operation: operation, timeout: configuration.statementTimeout, entry: entry)
    }

    /// Returns a connection leased with ``beginRead(entry:)`` or ``beginWrite(entry:)`` to its pool.
    func release(_ connection: SQLiteConnection) {
        (connection.isWriter ? writers : readerPool).release(reusable(connection))
    }

    /// A connection fit to go back to its pool: outside any transaction, whatever failed
    /// before (a transaction left open would hold a snapshot, or the write lock, forever); and
    /// one that a deadline interrupted is closed and replaced by a new one, never reused.
    private func reusable(_ connection: SQLiteConnection) -> SQLiteConnection {
        if !connection.wasInterrupted {
            if connection.isInTransaction { try? connection.transaction(.rollback) }
            return connection
        }
        let flags =
            connection.isWriter
            ? (configuration.readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE) : SQLITE_OPEN_READONLY
        guard
            let replacement = try? Self.open(
                configuration.path,
                flags: flags,
                configuration: configuration,
                isWriter: connection.isWriter
            )
        else {
            // The file cannot be opened again right now (a full disk): the interrupted
            // connection, rolled back, keeps the pool's place rather than shrinking it.
            if connection.isInTransaction { try? connection.transaction(.rollback) }
            return connection
        }
        connection.close()  // Rolls back what it held.
        return replacement
    }

    /// How many connections (readers and the writer) are free right now; after every session
    /// has ended, this is ``SQLiteConfiguration/readers`` + 1.
    public var idleConnectionCount: Int { readerPool.availableCount + writers.availableCount }

    /// A snapshot of the connections: how many there are and how many are leased.
    ///
    /// A connection returns to its pool outside any transaction, so only leased connections can hold one. Meant for
    /// health and debug endpoints.
    public func statistics() -> Statistics {
        let total = readerPool.size + writers.size
        return Statistics(connections: total, leased: total - idleConnectionCount)
    }

    /// Connection counts, from ``statistics()``.
    public struct Statistics: Sendable, Hashable, Codable {
        /// Every connection the database holds: the readers and the writer.
        public var connections: Int
        /// Connections leased to a session or a ``read(_:)`` / ``write(_:)`` call right now.
        public var leased: Int
    }

    /// Closes the database: refuses new leases, waits for leased connections to come back,
    /// then closes every connection and stops the writer's thread.
    ///
    /// The connections close on the writer's thread: the last one checkpoints the log into the
    /// file and syncs it, which on a busy disk can take seconds, and no cooperative thread
    /// waits for that.
    public func close() async {
        let connections = await readerPool.close() + writers.close()
        _ = try? await writerThread.run {
            for connection in connections { connection.close() }
        }
        writerThread.stop()
    }
}

/// The session waiting for a commit on the writer thread, resumed once: by the commit's end or
/// by its deadline, whichever comes first.
private final class CommitWaiter: Sendable {
    private let continuation: Mutex<CheckedContinuation<Void, any Error>?>

    init(_ continuation: CheckedContinuation<Void, any Error>) {
        self.continuation = Mutex(continuation)
    }

    /// Resumes the session with `result`, unless it was resumed already.
    func resume(with result: Result<Void, any Error>) {
        continuation.withLock { $0.take() }?.resume(with: result)
    }
}
