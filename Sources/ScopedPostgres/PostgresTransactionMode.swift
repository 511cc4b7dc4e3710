/// How a ``PostgresSession`` begins its transaction.
public enum PostgresTransactionMode: Sendable, Hashable {
    /// `BEGIN`: the transaction may write. PostgreSQL takes row locks only for the rows written,
    /// so a request that only reads holds no write lock either way.
    case readWrite
    /// `BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY`: every statement sees one snapshot
    /// (a long export stays consistent while others write), and a write fails.
    case readOnly
}
