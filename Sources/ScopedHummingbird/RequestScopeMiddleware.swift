public import Hummingbird
public import Scoped

/// A Hummingbird middleware that runs every request in its own scope, a child of the
/// application root.
///
/// The scope holds the request's ID (`ScopedValues.requestID`, Hummingbird's
/// `context.id`) plus whatever `update` sets. It stays open until the response body has been
/// written, streamed bodies included: reads inside a body's writer resolve to the request's
/// scope, so an export can stream rows from the request's transaction. It closes exactly once:
///
/// - `ScopeOutcome.success` when the body was written completely. A body of known
///   length up to 64 KiB (a JSON response) is written into memory inside the scope, which then
///   closes before the response is sent in one write: a commit that fails is the request's
///   error. A longer or streamed body has its last buffer held back until the scope's services
///   have closed, so a client that received the whole response received it after the request's
///   transaction committed; a commit that fails cuts the response short.
/// - `ScopeOutcome.cancelled` when the client went away before the body was written,
///   or the response was never written at all.
/// - `ScopeOutcome.failure(_:)` when the handler or the body's writer threw.
///
/// Errors, including one thrown by `update`, pass through unchanged, so middlewares installed
/// before it (request logs, `MetricsMiddleware`, `TracingMiddleware`) see each error's own
/// status. Work a handler starts for after its response goes through
/// `handOff(timeout:operation:)`.
///
/// ```swift
/// let router = Router()
/// router.add(middleware: RequestIDMiddleware())
/// router.add(middleware: RequestScopeMiddleware(root: root))
/// router.get("/movies/:id") { request, context -> String in
///     // Reads the request's scope: its request ID, its session, its overrides.
///     let id = try context.parameters.require("id", as: Int.self)
///     guard let movie = try await ScopedValues.current.movieRepository.movie(id: id) else {
///         throw HTTPError(.notFound)
///     }
///     return movie.title
/// }
/// ```
public struct RequestScopeMiddleware<Context: RequestContext>: RouterMiddleware {
    /// Changes a request's scope as it opens: select variants, set a principal.
    public typealias Update = @Sendable (inout ScopedValues, Request, Context) throws -> Void

    /// Says which tenant a request belongs to (from a header, the host, a path prefix, a
    /// claim), or `nil` for none; an error it throws fails the request with that error, before
    /// anything of a tenant is opened.
    public typealias TenantResolver = @Sendable (Request, Context) throws -> TenantID?

    private let root: any ScopeRootSource
    private let tenant: TenantResolver?
    private let update: Update

    /// Opens request scopes on `root`: a `ScopeRoot`, or a `ReloadableScopeRoot` whose current
    /// root each new request opens on, so a reload takes effect for new requests while requests
    /// in flight keep the root they started with.
    ///
    /// - Parameters:
    ///   - root: the application root every request scope is a child of.
    ///   - update: changes each request's scope as it opens; an error it throws fails the
    ///     request with that error.
    public init(root: some ScopeRootSource, update: @escaping Update = { _, _, _ in }) {
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
    public init(root: some ScopeRootSource, tenant: TenantResolver?, update: @escaping Update = { _, _, _ in }) {
        self.root = root
        self.tenant = tenant
        self.update = update
    }

    /// Runs the rest of the chain in a new request scope, and returns its response with a body
    /// that closes the scope once it has been written.
    ///
    /// `@concurrent`, as Hummingbird's `RouterMiddleware.handle` is: Hummingbird is built without
    /// `NonisolatedNonsendingByDefault`, which this package enables, so its async requirements
    /// run on the global executor, and an implementation must say so to match them.
    @concurrent
    public func handle(
        _ request: Request,
        context: Context,
        next: @concurrent (Request, Context) async throws -> Response
    ) async throws -> Response {
        let scope = try openScope(for: request, context: context)
        // One binding of the scope serves the handler, a short body produced in memory, and
        // the close after it.
        return try await scope.runClosingOnFailure {
            var response = try await next(request, context)
            response.body = try await ScopeBoundBody.bind(response.body, to: scope)
            return response
        }
    }

    /// The request's scope, opened on the root with its request ID, its tenant and `update`.
    ///
    /// Synchronous, and passed its closure directly: the async `handle` then keeps no copy of
    /// the request or of its generic context in its frame.
    private func openScope(for request: Request, context: Context) throws -> Scope {
        try root.current
            .openScope(tenant: try tenant?(request, context)) { values in
                values.requestID = CurrentRequestID.value ?? context.id
                try update(&values, request, context)
            }
    }
}
