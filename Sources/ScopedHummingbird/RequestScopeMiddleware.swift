import HTTPTypes
import Hummingbird
import Logging
import Scoped

/// A Hummingbird middleware that runs every request in its own scope, a child of the
/// application root.
///
/// The scope holds the request ID (a valid incoming `X-Request-ID`, or a new one) and the
/// request's logger, plus whatever `update` sets. Install ``Logging/Logger/MetadataProvider/scopedRequestID``
/// when bootstrapping logging so that every log line written inside a request carries its ID;
/// the middleware does not copy the ID into the logger's metadata, which costs a re-render of
/// the metadata per request with some log handlers. It closes when the response is produced or the
/// request fails or is cancelled, so per-scope resources commit or roll back with the request.
/// Every response, errors included, carries `X-Request-ID`.
///
/// ```swift
/// let router = Router()
/// router.add(middleware: RequestScopeMiddleware(root: root))
/// router.get("/movies/:id") { request, context in
///     try await MovieController().show(request, context: context)   // reads @Scoped entries
/// }
/// ```
public struct RequestScopeMiddleware<Context: RequestContext>: RouterMiddleware {
    /// Changes a request's scope as it opens: select variants, set a principal.
    public typealias Update = @Sendable (inout ScopedValues, Request, Context) throws -> Void
    /// Turns an error the request threw into its response; the last argument is the request ID.
    public typealias ErrorResponse = @Sendable (any Error, Request, Context, String) -> Response

    private let root: @Sendable () -> ScopeRoot
    private let update: Update
    private let errorResponse: ErrorResponse

    /// Opens request scopes on `root`.
    ///
    /// - Parameters:
    ///   - update: changes each request's scope as it opens; an error it throws fails the request.
    ///   - errorResponse: builds the response for an error the request threw, inside or while
    ///     closing the scope. By default a `HTTPResponseError` makes its own response and any
    ///     other error a 500.
    public init(root: ScopeRoot, update: @escaping Update = { _, _, _ in }, errorResponse: ErrorResponse? = nil) {
        self.init(rootProvider: { root }, update: update, errorResponse: errorResponse)
    }

    /// Opens request scopes on the current root of `root`, so a reload takes effect for new
    /// requests while requests in flight keep the root they started with.
    public init(root: ReloadableScopeRoot, update: @escaping Update = { _, _, _ in }, errorResponse: ErrorResponse? = nil) {
        self.init(rootProvider: { root.current }, update: update, errorResponse: errorResponse)
    }

    private init(rootProvider: @escaping @Sendable () -> ScopeRoot, update: @escaping Update, errorResponse: ErrorResponse?) {
        self.root = rootProvider
        self.update = update
        self.errorResponse = errorResponse ?? Self.defaultErrorResponse
    }

    public func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let requestID = RequestID.accepting(request.headers[.requestID])
        let logger = context.logger
        var response: Response
        do {
            response = try await root().withScope({ values in
                values.requestID = requestID
                values.logger = logger
                try update(&values, request, context)
            }) {
                try await next(request, context)
            }
        } catch {
            response = errorResponse(error, request, context, requestID)
        }
        response.headers[.requestID] = requestID
        return response
    }

    private static func defaultErrorResponse(
        _ error: any Error,
        request: Request,
        context: Context,
        requestID: String
    ) -> Response {
        if let error = error as? any HTTPResponseError {
            if let response = try? error.response(from: request, context: context) { return response }
        }
        context.logger.error("Request failed: \(error)")
        return Response(status: .internalServerError)
    }
}

extension HTTPField.Name {
    /// `X-Request-ID`.
    public static let requestID = Self("X-Request-ID")!
}
