public import Vapor

extension Response.Body {
    /// A streamed body written inside the current request's scope, which stays open until the
    /// body has been written.
    ///
    /// Reads inside `stream` resolve to the request's scope, so an export can stream rows from
    /// the request's transaction. The scope then closes exactly once: with
    /// `ScopeOutcome.success` when the stream ended, before its last buffer is sent (a commit
    /// that fails cuts the response short); `ScopeOutcome.cancelled` when the client went away
    /// or the body was never written; `ScopeOutcome.failure(_:)` when `stream` threw.
    ///
    /// ```swift
    /// app.get("export") { request async throws -> Response in
    ///     Response(
    ///         body: .init(scopedAsyncStream: { writer in
    ///             for movie in try await ScopedValues.current.movieRepository.all() {
    ///                 try await writer.write(.buffer(ByteBuffer(string: movie.title + "\n")))
    ///             }
    ///             try await writer.write(.end)
    ///         })
    ///     )
    /// }
    /// ```
    ///
    /// Made outside a request scope of `RequestScopeMiddleware` (or a second time in one
    /// request), it is a plain `Response.Body(asyncStream:)`. A plain stream does not run in
    /// the scope: Vapor gives no way to write a finished body into another writer.
    ///
    /// - Parameters:
    ///   - stream: writes the body, `.end` included.
    ///   - count: the body's length, when it is known.
    public init(
        scopedAsyncStream stream: @escaping @Sendable (any AsyncBodyStreamWriter) async throws -> Void,
        count: Int? = nil
    ) {
        if let scope = ScopeHandOver.current?.take() {
            self = ScopeBoundBody.stream(stream, count: count, closing: scope)
        } else if let count {
            self.init(asyncStream: stream, count: count)
        } else {
            self.init(asyncStream: stream)
        }
    }
}
