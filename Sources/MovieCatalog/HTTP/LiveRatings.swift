import Foundation
package import Hummingbird
package import HummingbirdWebSocket
package import Logging
package import Scoped
package import ScopedReload
import ScopedDatabase
import ScopedHummingbird
import ScopedHummingbirdWebSocket
import ScopedSQLite

/// `GET /movies/live`: a WebSocket on which a client records ratings, one message at a time.
///
/// The connection runs in a scope of its own, and each message in a child scope of it, with its
/// own write transaction: `{"rate":{"movieID":1,"stars":5}}` records a rating, and the reply
/// `{"average":4.5,"count":2,"movieID":1}` is sent once it has committed. A message that fails
/// rolls back its own write only and is answered with `{"error":{"code":…,"message":…}}`; the
/// connection stays open.
package struct LiveRatings: Sendable {
    @Scoped(\.ratingService) private var ratings

    /// The largest message accepted; a larger one ends the connection.
    package static var maximumMessageSize: Int { 16 * 1024 }

    /// Creates the handler; it reads its dependencies from each message's scope.
    package init() {}

    /// Adds the WebSocket route to `router`, whose connections are children of the root current
    /// when they connect, and keep it for as long as they are open; with `tenant`, each
    /// connection, and every message on it, belongs to the tenant of its upgrade request.
    package func addRoute<Context: WebSocketRequestContext>(
        to router: Router<Context>,
        root: ReloadableScopeRoot,
        tenant: (@Sendable (Request, Context) throws -> TenantID?)? = nil
    ) {
        router.ws(
            "/movies/live",
            root: root,
            tenant: tenant,
            update: { values, _, _ in values.transactionMode = .readWrite }
        ) { inbound, outbound, context in
            let requestID = ScopedValues.current.requestID ?? context.requestContext.id
            try await inbound.forEachMessage(maxSize: Self.maximumMessageSize) { message in
                try await rate(message)
            } then: { result in
                try await outbound.write(.text(reply(to: result, requestID: requestID, logger: context.logger)))
            }
        }
    }

    /// Records the rating a message asks for, in the message's scope.
    package func rate(_ message: WebSocketMessage) async throws -> Rating {
        guard case .text(let text) = message else {
            throw APIError.badRequest("Messages must be text frames of JSON.", code: "malformed_json")
        }
        let rate = try RequestInput.decode(RequestInput.LiveRatingBody.self, json: Data(text.utf8)).rate
        guard let rating = try await ratings.rate(movieID: rate.movieID, stars: rate.stars) else {
            throw APIError.notFound("No movie with id \(rate.movieID).")
        }
        return rating
    }

    /// The reply to a message: the new rating, or the error that rolled the message back, as
    /// JSON text.
    package func reply(to result: Result<Rating, any Error>, requestID: String, logger: Logger) -> String {
        do {
            switch result {
            case .success(let rating):
                return try JSONResponse.text(rating)
            case .failure(let error):
                return try JSONResponse.text(APIError(error, logger: logger).body(requestID: requestID))
            }
        } catch {
            return #"{"error":{"code":"internal_error","message":"The reply could not be encoded."}}"#
        }
    }
}
