public import Foundation

/// What an instance has read from a table PostgreSQL notifies it of, and when it last heard
/// from the database: for a status page.
public struct PostgresListenerStatus: Sendable, Hashable, Codable {
    /// How the current version was read.
    public enum Source: String, Sendable, Hashable, Codable {
        /// From a notification of its commit.
        case notify
        /// By reading at start-up, after connecting, or at the poll interval.
        case poll
    }

    /// The version read last.
    public var version: Int64
    /// How it was read.
    public var source: Source
    /// When the database last answered a read, or `nil` before the first.
    public var lastHeard: Date?
    /// Whether the listening connection is up.
    public var isListening: Bool
}
