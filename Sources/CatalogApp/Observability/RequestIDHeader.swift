import HTTPTypes
import Hummingbird
import Logging
import ScopedHummingbird

/// Passes each request on with the ID `RequestIDMiddleware` gave it in its `X-Request-ID`
/// header, so that `TracingMiddleware(recordingHeaders: [.requestID])` records it on the
/// request's span (`http.request.header.x_request_id`), also when the client sent none or one
/// that was not accepted.
///
/// Installed after `RequestIDMiddleware` and before `TracingMiddleware`, and only when spans are
/// exported (``OTLPExport``): a request that already carries its ID is passed on as it came.
struct RequestIDHeaderMiddleware<Context: RequestContext>: RouterMiddleware {
    @concurrent
    func handle(
        _ request: Request,
        context: Context,
        next: @concurrent (Request, Context) async throws -> Response
    ) async throws -> Response {
        // The ID `RequestIDMiddleware` chose: an accepted client ID is in the request logger's
        // metadata, and otherwise it is Hummingbird's own (the rule the WebSocket route reads too).
        let id = context.logger[metadataKey: "hb.request.id"]?.description ?? context.id
        guard request.headers[.requestID] != id else {
            return try await next(request, context)
        }
        var head = request.head
        head.headerFields[.requestID] = id
        return try await next(Request(head: head, body: request.body), context)
    }
}
