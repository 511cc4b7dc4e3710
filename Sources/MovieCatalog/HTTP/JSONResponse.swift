import Foundation
package import Hummingbird

/// JSON responses, encoded the same way everywhere.
package enum JSONResponse {
    /// One encoder for every response: configured once, and safe to share, since encoding
    /// reads its configuration and keeps no state between calls.
    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()

    /// `value` as a JSON response with `status` and `headers`, keys sorted.
    package static func make(
        _ value: some Encodable,
        status: HTTPResponse.Status = .ok,
        headers: HTTPFields = [:]
    ) throws -> Response {
        var headers = headers
        headers[.contentType] = "application/json; charset=utf-8"
        let data = try encoder.encode(value)
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}
