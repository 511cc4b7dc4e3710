public import Scoped

/// What a request's database session may do, named by intent: ScopedSQLite and ScopedPostgres
/// both read it, and both give each case the same meaning.
///
/// Set it where a scope opens, from what the request is for:
///
/// ```swift
/// try await root.withScope({ $0.transactionMode = request.method == .get ? .readOnly : .readWrite }) {
///     try await handle(request)
/// }
/// ```
public enum TransactionMode: String, Sendable, Hashable, CustomStringConvertible {
    /// A request that only reads, in as few round trips as the database allows: a write fails.
    ///
    /// - SQLite: one read transaction on a reader connection; it never waits for the writer.
    ///   (A transaction costs SQLite no round trip, so this is ``readOnlySnapshot`` there.)
    /// - PostgreSQL: no transaction of its own. Each statement runs on its own (autocommit) and
    ///   sees the rows committed before it began, as in PostgreSQL's default `READ COMMITTED`;
    ///   the connections such sessions lease refuse every write
    ///   (`default_transaction_read_only`). A read of one row is one round trip.
    case readOnly
    /// A request that only reads and needs every statement to see one snapshot of the
    /// database (an export, a report whose totals must add up); a write fails.
    ///
    /// - SQLite: one read transaction on a reader connection, as ``readOnly``.
    /// - PostgreSQL: `BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY`; its `COMMIT` is sent
    ///   after the scope ends and not waited for (a read-only transaction has nothing to lose),
    ///   the connection going back to the pool when it answers.
    case readOnlySnapshot
    /// A request that may write: its statements run in one transaction, committed when the
    /// scope ends well and rolled back otherwise.
    ///
    /// - SQLite: `BEGIN IMMEDIATE` on the database's one writer from the first statement, so
    ///   what the request read cannot change before it writes; such requests take turns.
    /// - PostgreSQL: `BEGIN` (read committed); rows written stay locked until the commit.
    case readWrite

    /// Whether the mode refuses writes: ``readOnly`` and ``readOnlySnapshot``.
    public var isReadOnly: Bool { self != .readWrite }

    /// A description for logs and error messages.
    public var description: String { rawValue }
}

extension ScopedValues {
    /// How the scope's database session begins its transaction; set it where a scope opens.
    ///
    /// Read by both `sqliteSession` and `postgresSession`. The default, ``TransactionMode/readWrite``,
    /// is always correct; ``TransactionMode/readOnly`` lets a request that only reads run beside
    /// others that write, and ``TransactionMode/readOnlySnapshot`` gives its reads one snapshot.
    public var transactionMode: TransactionMode {
        get { self[TransactionModeKey.self] }
        set { self[TransactionModeKey.self] = newValue }
    }
}

/// The key of ``Scoped/ScopedValues/transactionMode``, written by hand so that this module
/// builds without the `@Entry` macro.
private struct TransactionModeKey: ScopedKey {
    static let defaultValue = TransactionMode.readWrite
}
