package import Hummingbird
import OpenAPIRuntime

/// Reads each catalog request's body before the generated server does, refusing one larger
/// than `limit` with 413, and names the input at fault when the generated server cannot decode
/// the request.
///
/// Generated handlers read their whole body with no bound; this is the bound. The body is kept
/// for the error: a JSON number too large for an integer field fails to decode without naming
/// its field, which only the body can tell.
package struct CatalogInputMiddleware<Context: RequestContext>: RouterMiddleware {
    /// The largest body accepted, in bytes.
    package var limit: Int

    /// Refuses bodies larger than `limit` bytes.
    package init(limit: Int) {
        self.limit = limit
    }

    @concurrent
    package func handle(
        _ request: Request,
        context: Context,
        next: @concurrent (Request, Context) async throws -> Response
    )
        async throws -> Response
    {
        var request = request
        let body = try await request.collectBody(upTo: limit)
        do {
            return try await next(request, context)
        } catch let error as ServerError where error.operationInput == nil {
            throw RequestInput.apiError(forUndecodable: error, body: body)
        }
    }
}
