public import Scoped
public import Vapor

/// A Vapor middleware that runs every request in its own scope, a child of the application
/// root.
///
/// The scope holds the request's ID (`ScopedValues.requestID`) plus whatever `update` sets.
/// The ID is Vapor's `Request.id`, which Vapor takes unchecked from the client's
/// `X-Request-Id`, when it is a valid request ID (1 to 64 characters from
/// `A-Z a-z 0-9 . _ -`), as on every other stack; otherwise a new one, which also replaces the
/// client's in the `request-id` metadata of `request.logger`, so that no client can forge a
/// log line. It stays open until the response body has been written, streamed bodies
/// included, and closes exactly once:
///
/// - `ScopeOutcome.success` when the body was written completely. A body held in memory (a
///   JSON response), or a plain stream of known length up to 64 KiB, is complete inside the
///   scope, which closes before the response is returned: a commit that fails is the request's
///   error, and the client sees its status. A body made with
///   `Response.Body(scopedAsyncStream:count:)` is written inside the scope with its last buffer
///   held back until the scope has closed, so a client that received the whole response
///   received it after the request's transaction committed; a commit that fails cuts the
///   response short. (Any other stream is written after the scope closed: Vapor gives no way to
///   write a finished body into another writer.)
/// - `ScopeOutcome.cancelled` when the client went away before the body was written, or the
///   response was never written at all.
/// - `ScopeOutcome.failure(_:)` when the handler or the body's stream threw.
///
/// Errors, including one thrown by `update`, pass through unchanged, so Vapor's
/// `ErrorMiddleware` gives each its own status.
///
/// ```swift
/// let app = try await Application.make(.production)
/// app.middleware.use(RequestScopeMiddleware(root: root))
/// app.get("movies", ":id") { request async throws -> Movie in
///     // Reads the request's scope: its request ID, its session, its overrides.
///     let id = try request.parameters.require("id", as: Int.self)
///     guard let movie = try await ScopedValues.current.movieRepository.movie(id: id) else { throw Abort(.notFound) }
///     return movie
/// }
/// ```
///
/// Handlers that read the scope must be `async`: Vapor calls a synchronous handler from an
/// event-loop callback, outside the request's task and so outside its scope, whenever it first
/// collects the request's body (every `GET` without one included).
///
/// Install it with `app.middleware.use(_:)`, after Vapor's `ErrorMiddleware` (which
/// `Application` installs first), so that errors the scope's close throws become responses.
public struct RequestScopeMiddleware: AsyncMiddleware {
    /// Changes a request's scope as it opens: select variants, set a principal.
    public typealias Update = @Sendable (inout ScopedValues, Request) throws -> Void

    /// Says which tenant a request belongs to (from a header, the host, a path prefix, a
    /// claim), or `nil` for none; an error it throws fails the request with that error, before
    /// anything of a tenant is opened.
    public typealias TenantResolver = @Sendable (Request) throws -> TenantID?

    private let root: any ScopeRootSource
    private let tenant: TenantResolver?
    private let update: Update

    /// Opens request scopes on `root`: a `ScopeRoot`, or a `ReloadableScopeRoot` whose current
    /// root each new request opens on, so a reload takes effect for new requests while those in
    /// flight keep the root they started with.
    ///
    /// - Parameters:
    ///   - root: the application root every request scope is a child of.
    ///   - update: changes each request's scope as it opens; an error it throws fails the
    ///     request with that error.
    public init(root: some ScopeRootSource, update: @escaping Update = { _, _ in }) {
        self.init(root: root, tenant: nil, update: update)
    }

    /// Opens request scopes on `root`, each for the tenant `tenant` says.
    ///
    /// - Parameters:
    ///   - root: the application root every request scope is a child of.
    ///   - tenant: the tenant each request's scope belongs to, fixed as it opens; `nil`, or a
    ///     resolver that returns `nil`, for none. A scope of a tenant starts from the tenant's
    ///     values, and its tenant services are the tenant's (see `Tenancy`).
    ///   - update: changes each request's scope as it opens; an error it throws fails the
    ///     request with that error.
    public init(root: some ScopeRootSource, tenant: TenantResolver?, update: @escaping Update = { _, _ in }) {
        self.root = root
        self.tenant = tenant
        self.update = update
    }

    /// Runs the rest of the chain in a new request scope, and returns its response with a body
    /// that closes the scope once it has been written.
    public func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        let requestID = RequestIDs.accepting(request.id) ?? RequestIDs.next()
        if requestID != request.id { request.logger[metadataKey: "request-id"] = .string(requestID) }
        let setUp: (inout ScopedValues) throws -> Void = { values in
            values.requestID = requestID
            try update(&values, request)
        }
        let scope = try root.current.openScope(tenant: try tenant?(request), setUp)
        let handOver = ScopeHandOver(scope: scope)
        return try await scope.runClosingOnFailure {
            let response = try await ScopeHandOver.$current.withValue(handOver) { try await next.respond(to: request) }
            response.body = try await ScopeBoundBody.settle(
                response.body,
                in: scope,
                handOver: handOver,
                on: request.eventLoop
            )
            return response
        }
    }
}
