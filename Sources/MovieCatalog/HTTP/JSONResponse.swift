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

    /// The content type of a stream of JSON values, one per line.
    package static let ndjsonContentType = "application/x-ndjson"

    /// `value` as JSON text, keys sorted.
    package static func text(_ value: some Encodable) throws -> String {
        String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// Appends `value` as one line of JSON to `buffer`, keys sorted.
    package static func appendLine(_ value: some Encodable, to buffer: inout ByteBuffer) throws {
        buffer.writeBytes(try encoder.encode(value))
        buffer.writeInteger(UInt8(ascii: "\n"))
    }

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
