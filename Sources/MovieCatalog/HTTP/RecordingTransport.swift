package import HTTPTypes
package import OpenAPIRuntime

/// A transport that registers generated handlers with another and records each route in a
/// ``RouteTable``, so that the generated routes answer 405 with `Allow` as the others do.
package struct RecordingTransport<Transport: ServerTransport>: ServerTransport {
    /// The transport that serves the routes.
    package var transport: Transport
    /// The table the routes are recorded in.
    package var table: RouteTable

    /// Registers with `transport`, recording in `table`.
    package init(transport: Transport, table: RouteTable) {
        self.transport = transport
        self.table = table
    }

    /// Registers `handler` with the transport, and records the route with its `{name}`
    /// parameters written as the router writes them, `:name`.
    package func register(
        _ handler:
            @Sendable @escaping @concurrent (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (
                HTTPResponse, HTTPBody?
            ),
        method: HTTPRequest.Method,
        path: String
    ) throws {
        try transport.register(handler, method: method, path: path)
        let routerPath = path.split(separator: "/", omittingEmptySubsequences: false)
            .map { segment in
                segment.hasPrefix("{") && segment.hasSuffix("}") ? ":" + segment.dropFirst().dropLast() : segment
            }
        table.add(method, routerPath.joined(separator: "/"))
    }
}
