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
    /// A request that only reads: all its statements see one snapshot of the database, and a
    /// write fails.
    ///
    /// - SQLite: one read transaction on a reader connection; it never waits for the writer.
    /// - PostgreSQL: `BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY`.
    case readOnly
    /// A request that may write: its statements run in one transaction, committed when the
    /// scope ends well and rolled back otherwise.
    ///
    /// - SQLite: `BEGIN IMMEDIATE` on the database's one writer from the first statement, so
    ///   what the request read cannot change before it writes; such requests take turns.
    /// - PostgreSQL: `BEGIN` (read committed); rows written stay locked until the commit.
    case readWrite

    /// A description for logs and error messages.
    public var description: String { rawValue }
}

extension ScopedValues {
    /// How the scope's database session begins its transaction; set it where a scope opens.
    ///
    /// Read by both `sqliteSession` and `postgresSession`. The default, ``TransactionMode/readWrite``,
    /// is always correct; ``TransactionMode/readOnly`` lets a request that only reads run beside
    /// others that write.
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
