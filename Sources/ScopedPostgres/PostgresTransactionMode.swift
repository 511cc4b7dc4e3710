public import ScopedDatabase

/// How a ``PostgresSession`` begins its transaction: now `TransactionMode`, which both database
/// layers read, with the same cases.
@available(*, deprecated, renamed: "TransactionMode")
public typealias PostgresTransactionMode = TransactionMode
