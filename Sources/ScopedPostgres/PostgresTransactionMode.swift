/// How a ``PostgresSession`` begins its transaction.
public enum PostgresTransactionMode: Sendable, Hashable {
    /// `BEGIN`: the transaction may write. PostgreSQL takes row locks only for the rows written,
    /// so a request that only reads holds no write lock either way.
    case readWrite
    /// `BEGIN READ ONLY`: a write fails, for requests that must not write.
    case readOnly
}
