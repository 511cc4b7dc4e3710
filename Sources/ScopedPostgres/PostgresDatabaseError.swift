import PostgresNIO

/// A database error, classified so that an application can answer it: a duplicate, a missing
/// reference, a conflict to retry, a lost connection or a full server.
///
/// Its description names the kind, the SQLSTATE and the server's message; it never contains a
/// statement's bound values or the connection's password.
public struct PostgresDatabaseError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure it was.
    public enum Kind: String, Sendable, Hashable {
        /// A unique constraint refused a duplicate (SQLSTATE 23505).
        case uniqueViolation
        /// A foreign key refused a missing reference (23503).
        case foreignKeyViolation
        /// A serializable transaction, or a deadlock, must be retried (40001, 40P01).
        case serializationFailure
        /// The connection to the server was lost, or could not be opened.
        case connectionLost
        /// The server accepts no more connections (53300).
        case tooManyConnections
        /// The server's disk is full (53100): nothing more can be written until space is freed.
        case diskFull
        /// Any other error.
        case other
    }

    /// What kind of failure it was.
    public var kind: Kind
    /// The SQLSTATE code the server sent, if it sent one.
    public var sqlState: String?
    /// The server's message, or the client's description of the failure.
    public var message: String
    /// The constraint at fault, for constraint violations.
    public var constraint: String?

    /// A description for logs and error messages.
    public var description: String {
        "PostgreSQL \(kind.rawValue)\(sqlState.map { " (\($0))" } ?? ""): \(message)"
    }

    /// The session's connection was closed before a statement was sent: by the server, or by
    /// the session itself when an earlier statement passed its deadline.
    static let connectionClosed = PostgresDatabaseError(
        kind: .connectionLost,
        sqlState: nil,
        message: "the session's connection is closed (by the server, or after a statement passed its deadline)",
        constraint: nil
    )

    /// Classifies an error thrown by postgres-nio; other errors (cancellation, this library's
    /// own) are returned unchanged.
    static func classify(_ error: any Error) -> any Error {
        guard let error = error as? PSQLError else { return error }
        if let info = error.serverInfo, let state = info[.sqlState] {
            let kind: Kind =
                switch state {
                case "23505": .uniqueViolation
                case "23503": .foreignKeyViolation
                case "40001", "40P01": .serializationFailure
                case "53300": .tooManyConnections
                case "53100": .diskFull
                case "57P01", "57P02", "57P03": .connectionLost
                default: .other
                }
            return PostgresDatabaseError(
                kind: kind,
                sqlState: state,
                message: info[.message] ?? "\(error.code)",
                constraint: info[.constraintName]
            )
        }
        let lost: Set<PSQLError.Code> = [
            .serverClosedConnection, .clientClosedConnection, .connectionError, .uncleanShutdown, .poolClosed,
        ]
        return PostgresDatabaseError(
            kind: lost.contains(error.code) ? .connectionLost : .other,
            sqlState: nil,
            message: "\(error.code)\(error.underlying.map { ": \($0)" } ?? "")",
            constraint: nil
        )
    }
}
