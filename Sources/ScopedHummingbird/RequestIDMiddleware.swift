public import HTTPTypes
public import Hummingbird
import Logging
import Scoped

/// A Hummingbird middleware that gives every request one ID and returns it in `X-Request-ID`.
///
/// A valid incoming `X-Request-ID` (1 to 64 characters from `A-Z a-z 0-9 . _ -`) replaces the
/// ID Hummingbird generated for the request in the request's logger (`hb.request.id`);
/// otherwise Hummingbird's own ID stands. The request's logger is bound as `Logger.current`. Either way the request has exactly
/// one ID, every log line written with its logger carries it, and every response, errors
/// included, returns it. Install it first, so that the middlewares after it log and trace
/// with the ID the client sees:
///
/// ```swift
/// router.add(middleware: RequestIDMiddleware())
/// router.add(middleware: RequestScopeMiddleware(root: root))
/// ```
///
/// An error that reaches it becomes its response here, so the response can carry the ID: an
/// `HTTPResponseError` makes its own response, any other error a 500.
public struct RequestIDMiddleware<Context: RequestContext>: RouterMiddleware {
    /// Creates the middleware.
    public init() {}

    /// Gives the request its ID, runs the rest of the chain, and adds the ID to the response.
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
        var context = context
        let id: String
        if let incoming = request.headers[.requestID].flatMap(RequestIDs.accepting) {
            id = incoming
            context.logger[metadataKey: "hb.request.id"] = .string(incoming)
        } else {
            // Hummingbird formats its ID anew on every `context.id`: format it once.
            id = context.id
        }
        // Hummingbird's server binds its request logger as `Logger.current`, but not every
        // responder does (its router test framework does not); bind the request's logger here,
        // and the ID for `RequestScopeMiddleware`.
        var response = await withLogger(context.logger) { _ in
            await CurrentRequestID.$value.withValue(id) { await respond(request, context: context, next: next) }
        }
        response.headers[.requestID] = id
        return response
    }

    private func respond(
        _ request: Request,
        context: Context,
        next: @concurrent (Request, Context) async throws -> Response
    ) async -> Response {
        do {
            return try await next(request, context)
        } catch let error as any HTTPResponseError {
            if let response = try? error.response(from: request, context: context) { return response }
            context.logger.error("Could not render the error response for \(error)")
            return Response(status: error.status)
        } catch {
            // By type too, so a dashboard can count failures by cause (`ScopedError`, a
            // database's error) without parsing messages.
            context.logger.error(
                "Request failed: \(error)",
                metadata: ["error.type": .string(String(reflecting: type(of: error)))]
            )
            return Response(status: .internalServerError)
        }
    }
}

extension HTTPField.Name {
    /// `X-Request-ID`.
    public static let requestID = Self("X-Request-ID")!
}

/// The ID ``RequestIDMiddleware`` gave the request being handled, so that the request scope
/// need not format Hummingbird's ID again.
enum CurrentRequestID {
    /// The ID, inside ``RequestIDMiddleware``'s `next`; `nil` outside it.
    @TaskLocal static var value: String?
}
