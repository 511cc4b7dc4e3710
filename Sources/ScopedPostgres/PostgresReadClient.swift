public import Logging
import PostgresNIO
public import ServiceLifecycle
import Synchronization

/// The client read-only sessions lease from: postgres-nio's `PostgresClient` on connections
/// that refuse every write, and the schema each of its connections is on.
///
/// A read-only session on PostgreSQL needs no transaction (`ScopedValues.transactionMode`
/// `.readOnly`): each statement runs on its own, and PostgreSQL itself refuses a write on these
/// connections (`default_transaction_read_only`). A tenant's session needs its schema on the
/// `search_path`: it is set on the connection once, at the session level, and remembered, so a
/// session that leases a connection already on its tenant's schema sends nothing for it. A
/// connection on another schema, or on one not known for sure (a statement setting it failed),
/// is set again before the session's first statement; a new connection (after a restart, say)
/// is on the default `search_path`.
///
/// An app service (``PostgresReadClientKey``) that a root runs as it runs the application's
/// client (it is a swift-service-lifecycle `Service`). Only read sessions use its connections:
/// nothing else changes their `search_path`, which is what makes remembering it exact.
public final class PostgresReadClient: Service, Sendable {
    /// The client read sessions lease their connections from.
    ///
    /// Not public: nothing but a read session may use its connections, or their remembered
    /// `search_path` would not hold.
    let client: PostgresClient
    /// The schema of each connection that is not on the default `search_path`, by ID.
    let schemas = ConnectionSchemas()
    /// Read-only `COMMIT`s that failed after their scope had ended (`TransactionMode.readOnlySnapshot`).
    let failedCommits = Atomic<Int>(0)

    /// How many read-only `COMMIT`s failed after their scope had ended.
    var failedCommitCount: Int { failedCommits.load(ordering: .relaxed) }

    /// A read client for `configuration`
    /// (``PostgresConfiguration/readClientConfiguration``); it serves nothing until ``run()``.
    ///
    /// - Parameters:
    ///   - configuration: the database's configuration.
    ///   - backgroundLogger: where the client logs what no statement's logger receives.
    public init(configuration: PostgresConfiguration, backgroundLogger: Logger) {
        client = PostgresClient(
            configuration: configuration.readClientConfiguration,
            backgroundLogger: backgroundLogger
        )
    }

    /// Runs the client until the task is cancelled.
    public func run() async {
        await client.run()
    }
}

/// The schema each connection of a read client is on, where it is not the default.
///
/// A session reads and changes the entry of the connection it holds, and only while it holds
/// it: no two sessions touch one entry at once. The lock guards the table itself.
final class ConnectionSchemas: Sendable {
    /// Where a connection's `search_path` stands.
    enum Place: Equatable, Sendable {
        /// On the connection's default.
        case defaultPath
        /// On this schema only.
        case schema(PostgresSchema)
        /// Unknown: a statement that set it failed; it is set before the next session reads.
        case unknown

        /// The place of a session on `schema` (`nil` for the default).
        init(_ schema: PostgresSchema?) {
            self = schema.map { .schema($0) } ?? .defaultPath
        }
    }

    private let places = Mutex<[PostgresConnection.ID: Place]>([:])

    /// Where `connection`'s `search_path` stands: a connection never recorded is on the default.
    func place(of connection: PostgresConnection.ID) -> Place {
        places.withLock { $0[connection] } ?? .defaultPath
    }

    /// Records where `connection` stands now.
    ///
    /// A connection's entry is removed once it has closed (its ID is never used again), so the
    /// table holds no more entries than the client has connections.
    func record(_ place: Place, for connection: PostgresConnection) {
        let id = connection.id
        let isNew = places.withLock { places in places.updateValue(place, forKey: id) == nil }
        if isNew {
            connection.closeFuture.whenComplete { [self] _ in _ = places.withLock { $0.removeValue(forKey: id) } }
        }
    }

    /// How many connections are on a tenant's schema, or on one not known.
    var offDefaultCount: Int { places.withLock { $0.values.count { $0 != .defaultPath } } }
}
