/// How a ``SQLiteSession`` begins its transaction, in SQLite's own terms: what the deprecated
/// `sqliteTransactionMode` entry takes.
///
/// Use `TransactionMode` instead, which both database layers read: `.readWrite` is
/// ``immediate``, and `.readOnly` is ``deferred`` without the move to the writer.
public enum SQLiteTransactionMode: String, Hashable, Sendable, CustomStringConvertible {
    /// Reads run on a reader in a read transaction; the first write ends it and moves to the
    /// writer in a new `BEGIN IMMEDIATE` transaction. The fallback for work that does not know
    /// up front whether it writes: reads stay off the writer, but a check made before the
    /// first write is not protected by the write's transaction.
    case deferred
    /// Every statement, reads included, runs on the writer in one `BEGIN IMMEDIATE`
    /// transaction, begun by the first statement: what a check-then-write request needs.
    case immediate

    /// A description for logs and error messages.
    public var description: String { rawValue }
}
