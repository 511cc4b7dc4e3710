public import Scoped

extension ScopedValues {
    /// The current request's ID, set by ``RequestScopeMiddleware``; `nil` outside a request.
    ///
    /// It is the ID Hummingbird's logger carries as `hb.request.id` (after
    /// ``RequestIDMiddleware`` accepted a client's `X-Request-ID`), so a log line written with
    /// the request's logger or `Logger.current` names the same request.
    @Entry public var requestID: String? = nil
}
