import Logging
import PostgresNIO
import ServiceLifecycle

/// Follows what a PostgreSQL channel announces on a connection of its own: reads when
/// notified, and every `pollInterval` as the fallback for a notification that never came, and
/// reconnects with backoff when the connection is lost.
///
/// A notification is sent only when its transaction commits, and not to a listener that was
/// disconnected then; so each connection reads once right after its `LISTEN`, and the poll
/// catches what a lost notification would have said. A read that does not answer within
/// `readTimeout` (a database that froze) closes the connection, which ends the read, and the
/// follower connects again.
struct PostgresChannelFollower: Sendable {
    /// What started a read.
    enum Trigger: Sendable {
        case notification, poll
    }

    let configuration: PostgresConfiguration
    let channel: String
    let pollInterval: Duration
    let readTimeout: Duration
    let logger: Logger
    /// Told when the listening connection is up (`true`) and when it was lost.
    let listening: @Sendable (Bool) -> Void

    /// The shortest wait before reconnecting; doubled at each failure, up to `pollInterval`.
    static let firstBackoff = Duration.milliseconds(100)

    /// Connects once, runs `read` on that connection, and closes it: the read at start-up.
    ///
    /// - Parameters:
    ///   - what: what is read, for the error: `settings`, `tenants`.
    ///   - read: reads on the connection.
    /// - Throws: ``PostgresStartupError`` when the database cannot be reached within its
    ///   `connectTimeout`, or `read` failed.
    func readOnce(_ what: String, read: (PostgresConnection) async throws -> Void) async throws {
        do {
            let connection = try await PostgresConnection.connect(
                configuration: try configuration.connectionConfiguration(),
                id: 0,
                logger: logger
            )
            do {
                try await read(connection)
                try await connection.close()
            } catch {
                try? await connection.close()
                throw error
            }
        } catch {
            throw PostgresStartupError(
                url: configuration.redactedURL,
                problem: "cannot read its \(what): \(PostgresDatabaseError.classify(error))"
            )
        }
    }

    /// Runs `read` on each notification and poll until the task is cancelled or the service
    /// group shuts down gracefully.
    ///
    /// - Parameter read: reads what changed on the connection given; throws when it could not.
    func runUntilShutdown(read: @escaping @Sendable (PostgresConnection, Trigger) async throws -> Void) async {
        await cancelWhenGracefulShutdown { await run(read: read) }
    }

    /// Runs `read` on each notification and poll until the task is cancelled.
    private func run(read: @escaping @Sendable (PostgresConnection, Trigger) async throws -> Void) async {
        var backoff = Self.firstBackoff
        var attempt = 0
        while !Task.isCancelled {
            attempt += 1
            do {
                var connectionConfiguration = try configuration.connectionConfiguration()
                // What an operator sees in `pg_stat_activity`: `scoped_settings` for the settings.
                connectionConfiguration.options.additionalStartupParameters.append(("application_name", channel))
                let connection = try await PostgresConnection.connect(
                    configuration: connectionConfiguration,
                    id: attempt,
                    logger: logger
                )
                do {
                    try await follow(on: connection, read: read) { backoff = Self.firstBackoff }
                } catch {
                    listening(false)
                    try? await connection.close()
                    throw error
                }
            } catch {
                listening(false)
                if Task.isCancelled { return }
                logger.warning(
                    "Lost the connection listening on \(channel): \(PostgresDatabaseError.classify(error)); reconnecting in \(backoff)"
                )
                try? await Task.sleep(for: backoff)
                backoff = min(backoff * 2, pollInterval)
            }
        }
    }

    /// Listens on `connection` until it fails or the task is cancelled.
    private func follow(
        on connection: PostgresConnection,
        read: @escaping @Sendable (PostgresConnection, Trigger) async throws -> Void,
        connected: () -> Void
    ) async throws {
        try await connection.listen(on: channel) { notifications in
            // What committed while nobody listened.
            try await withDeadline(closing: connection) { try await read(connection, .poll) }
            listening(true)
            connected()
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for try await _ in notifications {
                        try await withDeadline(closing: connection) { try await read(connection, .notification) }
                    }
                    try Task.checkCancellation()
                    throw PostgresChannelFollowerError.connectionClosed
                }
                group.addTask {
                    while true {
                        try await Task.sleep(for: pollInterval)
                        try await withDeadline(closing: connection) { try await read(connection, .poll) }
                    }
                }
                // Both run until one fails; the other is cancelled with it.
                defer { group.cancelAll() }
                try await group.next()
            }
        }
    }

    /// Runs `body`, closing `connection` if it has not returned within `readTimeout`.
    private func withDeadline(
        closing connection: PostgresConnection,
        _ body: @escaping @Sendable () async throws -> Void
    ) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await body() }
            group.addTask { [readTimeout] in
                try await Task.sleep(for: readTimeout)
                // Fails the read that hangs, which is waiting on this connection.
                try? await connection.close()
                throw PostgresChannelFollowerError.noAnswer(within: readTimeout)
            }
            defer { group.cancelAll() }
            try await group.next()
        }
    }
}

/// Why a channel's connection was given up and made again.
enum PostgresChannelFollowerError: Error, CustomStringConvertible {
    case connectionClosed
    case noAnswer(within: Duration)

    var description: String {
        switch self {
        case .connectionClosed: "the connection was closed"
        case .noAnswer(let timeout): "the database did not answer within \(timeout)"
        }
    }
}
