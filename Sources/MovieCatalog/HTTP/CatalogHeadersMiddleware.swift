import Foundation
package import HTTPTypes
package import OpenAPIRuntime

/// Keeps the catalog's headers as its contract has always had them, around the generated server.
///
/// The generated server negotiates: it would refuse `curl -d`'s form content type with 415 and
/// an `Accept` without JSON with 406. The catalog speaks JSON only and never turned a request
/// away for its headers, so `Content-Type` and `Accept` are dropped before it reads the
/// request. And it percent-encodes a header's value as a URI component: `Location` is sent as
/// the path it is (`/movies/4`, not `%2Fmovies%2F4`).
package struct CatalogHeadersMiddleware: ServerMiddleware {
    /// Keeps the contract's headers.
    package init() {}

    /// Runs the operation on the request without its `Content-Type` and `Accept` fields, and
    /// answers with its `Location` decoded.
    ///
    /// `@concurrent`, as the protocol's requirement is (swift-openapi-runtime is built without
    /// `NonisolatedNonsendingByDefault`).
    @concurrent
    package func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        metadata: ServerRequestMetadata,
        operationID: String,
        next:
            @concurrent @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (
                HTTPResponse, HTTPBody?
            )
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        request.headerFields[.contentType] = nil
        request.headerFields[.accept] = nil
        var (response, responseBody) = try await next(request, body, metadata)
        if let location = response.headerFields[.location] {
            response.headerFields[.location] = location.removingPercentEncoding ?? location
        }
        return (response, responseBody)
    }
}
