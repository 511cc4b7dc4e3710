public import HTTPTypes
public import OpenAPIRuntime
public import Scoped

/// A swift-openapi-runtime `ServerMiddleware` that runs every generated handler in its own
/// request scope, a child of the application root, on any transport.
///
/// Handlers that swift-openapi-generator generates never see the framework's request, so a
/// framework's middleware cannot reach them with values; a task-local scope can. The scope
/// holds the request's ID (`ScopedValues.requestID`) plus whatever `update` sets from the HTTP
/// request, its metadata and the operation's ID. The ID is the one a framework-level scope
/// around this middleware already set (Hummingbird's or Vapor's request scope), else a valid
/// `X-Request-ID` from the client (1 to 64 characters from `A-Z a-z 0-9 . _ -`), else a new
/// ID (32 hexadecimal digits). The scope stays open until the response body has been produced, and closes exactly
/// once:
///
/// - `ScopeOutcome.success` when the body was produced completely. A body of known length
///   up to 64 KiB (a JSON response) is produced inside the scope, which closes before the
///   response is returned: a commit that fails is the request's error. A longer or streamed body
///   has its last chunk held back until the scope has closed, so a client that received the
///   whole response received it after the commit; a commit that fails cuts the body short.
/// - `ScopeOutcome.cancelled` when the transport stopped reading the body (the client went
///   away) or never read it.
/// - `ScopeOutcome.failure(_:)` when the handler or the body threw.
///
/// Behind a framework's request scope opened on the same root (Hummingbird's or Vapor's
/// `RequestScopeMiddleware`), it opens no scope of its own: the handler runs in that request's
/// scope, with `update`'s changes as values over it, so a request has one scope, one session
/// and one transaction however the layers stack, and that scope's rules for the body apply. A
/// streamed body produced after the handler returned sees the outer scope's values without
/// `update`'s changes. (Should a reload replace a `ReloadableScopeRoot`'s root between the two
/// middlewares, the request gets a scope of its own on the new root.)
///
/// Errors pass through unchanged, so the transport and the middlewares before this one see
/// each error as the handler threw it.
///
/// ```swift
/// let transport = VaporTransport(routesBuilder: app)  // or Hummingbird's router, or any transport
/// try CatalogHandler()
///     .registerHandlers(
///         on: transport,
///         middlewares: [RequestScopeServerMiddleware(root: root)]
///     )
/// ```
public struct RequestScopeServerMiddleware: ServerMiddleware {
    /// Changes a request's scope as it opens: select variants from a header, set a principal.
    public typealias Update = @Sendable (inout ScopedValues, HTTPRequest, ServerRequestMetadata, String) throws -> Void

    private let root: any ScopeRootSource
    private let update: Update

    /// Opens request scopes on `root`: a `ScopeRoot`, or a `ReloadableScopeRoot` whose current
    /// root each new request opens on, so a reload takes effect for new requests while requests
    /// in flight keep the root they started with.
    ///
    /// - Parameters:
    ///   - root: the application root every request scope is a child of.
    ///   - update: changes each request's scope as it opens, given the request, its metadata
    ///     (path parameters) and the operation's ID; an error it throws fails the request with
    ///     that error.
    public init(root: some ScopeRootSource, update: @escaping Update = { _, _, _, _ in }) {
        self.root = root
        self.update = update
    }

    /// Runs the handler in a new request scope, and returns its response with a body that
    /// closes the scope once it has been produced.
    ///
    /// `@concurrent`, as the protocol's requirement is: swift-openapi-runtime is built without
    /// `NonisolatedNonsendingByDefault`, which this package enables.
    @concurrent
    public func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        metadata: ServerRequestMetadata,
        operationID: String,
        next:
            @concurrent @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (
                HTTPResponse, HTTPBody?
            )
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let root = root.current
        let current = ScopedValues.current
        if current.isInRequestScope(of: root) {
            // Behind a framework's request scope on the same root (Hummingbird's, Vapor's): one
            // scope, one session and one transaction per request. That scope closes after the
            // response body, and holds its last chunk back until it has.
            return try await withScopedValues({ try update(&$0, request, metadata, operationID) }) {
                try await next(request, body, metadata)
            }
        }
        let id = current.requestID ?? Self.requestID(of: request)
        let scope =
            try root
            .openScope { values in
                values.requestID = id
                try update(&values, request, metadata, operationID)
            }
        return try await scope.runClosingOnFailure {
            let (response, responseBody) = try await next(request, body, metadata)
            return (response, try await ScopeBoundBody.bind(responseBody, to: scope))
        }
    }

    /// The client's `X-Request-ID` when it is valid, else a new ID.
    static func requestID(of request: HTTPRequest) -> String {
        request.headerFields[.xRequestID].flatMap(RequestIDs.accepting) ?? RequestIDs.next()
    }
}

extension HTTPField.Name {
    /// `X-Request-ID`.
    fileprivate static let xRequestID = Self("X-Request-ID")!
}
