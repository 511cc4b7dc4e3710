import Logging
import Scoped

extension ScopedValues {
    /// The current request's ID, set by ``RequestScopeMiddleware``; `nil` outside a request.
    @Entry public var requestID: String? = nil

    /// The current request's logger.
    @Entry public var logger: Logger = Logger(label: "scoped")
}

extension Logger.MetadataProvider {
    /// Adds `request_id` to every log line written inside a request scope, read from the scope
    /// when the line is written:
    ///
    /// ```swift
    /// LoggingSystem.bootstrap(StreamLogHandler.standardError, metadataProvider: .scopedRequestID)
    /// ```
    public static let scopedRequestID = Logger.MetadataProvider {
        guard let id = ScopedValues.current.requestID else { return [:] }
        return ["request_id": .string(id)]
    }
}
