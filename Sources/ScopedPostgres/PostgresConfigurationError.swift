/// A database URL that cannot be used; its message never shows the password.
public struct PostgresConfigurationError: Error, Sendable, CustomStringConvertible {
    /// The URL, with its password redacted.
    public var url: String
    /// What is wrong with it.
    public var problem: String

    /// A description for logs and error messages.
    public var description: String { "Invalid PostgreSQL URL \(url): \(problem)" }
}
