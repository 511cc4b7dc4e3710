extension ScopedValues {
    /// The ID of the request the current scope serves; `nil` outside a request.
    ///
    /// Every adapter's request scope sets it: Hummingbird's `RequestScopeMiddleware` (the ID
    /// its logger carries as `hb.request.id`), Vapor's (`Request.id`, which Vapor takes from
    /// `X-Request-Id`), the OpenAPI middleware (a client's `X-Request-ID`, else a new one) and
    /// the gRPC interceptor (a client's `x-request-id` metadata, else a new one). It is one entry
    /// in the core so that a handler, and every service it reads, names its request the same way
    /// whichever stack serves it.
    @Entry public var requestID: String? = nil
}
