import Logging
import Scoped

extension ScopedValues {
    /// The current request's ID, set by ``RequestScopeMiddleware``; `nil` outside a request.
    @Entry public var requestID: String? = nil

    /// The current request's logger, carrying its `request_id` metadata.
    @Entry public var logger: Logger = Logger(label: "scoped")
}
