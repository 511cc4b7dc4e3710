package import Hummingbird

/// Turns every error a request throws into an ``APIError``, so that its status is decided once,
/// here, before the request log and the request-ID middleware see it.
///
/// A request for a known path with a method it does not serve gets 405 with `Allow` instead of
/// the router's 404.
package struct APIErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    /// The routes the router serves, for 405 answers.
    package var routes: RouteTable

    /// Answers 405 for the known paths of `routes`.
    package init(routes: RouteTable) {
        self.routes = routes
    }

    @concurrent
    package func handle(
        _ request: Request,
        context: Context,
        next: @concurrent (Request, Context) async throws -> Response
    )
        async throws -> Response
    {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound && error.body == nil {
            // The router's own 404: no route matched the path and the method.
            let allowed = routes.allowedMethods(for: request.uri.path)
            if !allowed.isEmpty { throw APIError.methodNotAllowed(request.method, allowed: allowed) }
            throw APIError(error, logger: context.logger)
        } catch {
            throw APIError(error, logger: context.logger)
        }
    }
}
