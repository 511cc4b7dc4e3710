public import Hummingbird
public import Scoped

/// A Hummingbird middleware that runs every request in its own scope, a child of the
/// application root.
///
/// The scope holds the request's ID (``Scoped/ScopedValues/requestID``, Hummingbird's
/// `context.id`) plus whatever `update` sets. It closes when the response is produced or the
/// request fails or is cancelled, so per-scope resources commit or roll back with the request.
/// Errors, including one thrown by `update`, pass through unchanged, so middlewares installed
/// before it (request logs, `MetricsMiddleware`, `TracingMiddleware`) see each error's own
/// status.
///
/// ```swift
/// let router = Router()
/// router.add(middleware: RequestIDMiddleware())
/// router.add(middleware: RequestScopeMiddleware(root: root))
/// router.get("/movies/:id") { request, context in
///     try await MovieController().show(request, context: context)   // reads @Scoped entries
/// }
/// ```
public struct RequestScopeMiddleware<Context: RequestContext>: RouterMiddleware {
    /// Changes a request's scope as it opens: select variants, set a principal.
    public typealias Update = @Sendable (inout ScopedValues, Request, Context) throws -> Void

    private let root: @Sendable () -> ScopeRoot
    private let update: Update

    /// Opens request scopes on `root`.
    ///
    /// - Parameters:
    ///   - root: the application root every request scope is a child of.
    ///   - update: changes each request's scope as it opens; an error it throws fails the
    ///     request with that error.
    public init(root: ScopeRoot, update: @escaping Update = { _, _, _ in }) {
        self.root = { root }
        self.update = update
    }

    /// Opens request scopes on the current root of `root`, so a reload takes effect for new
    /// requests while requests in flight keep the root they started with.
    public init(root: ReloadableScopeRoot, update: @escaping Update = { _, _, _ in }) {
        self.root = { root.current }
        self.update = update
    }

    /// Runs the rest of the chain in a new request scope and closes the scope with the outcome.
    @concurrent
    public func handle(
        _ request: Request,
        context: Context,
        next: @concurrent (Request, Context) async throws -> Response
    ) async throws -> Response {
        try await root()
            .withScope({ values in
                values.requestID = CurrentRequestID.value ?? context.id
                try update(&values, request, context)
            }) {
                try await next(request, context)
            }
    }
}
