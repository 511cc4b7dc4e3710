import Foundation

/// A response as read from the wire.
struct HTTPResponse: Sendable {
    var status: Int
    var headers: [(String, String)]
    var body: [UInt8]

    func header(_ name: String) -> String? {
        headers.first { $0.0.caseInsensitiveCompare(name) == .orderedSame }?.1
    }

    var text: String { String(decoding: body, as: UTF8.self) }

    func json<T: Decodable>(_ type: T.Type) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(body))
    }

    /// The `error` object of a JSON error body, if the body is one.
    var errorBody: ErrorBody.Detail? { (try? json(ErrorBody.self))?.error }

    struct ErrorBody: Decodable {
        struct Detail: Decodable {
            var code: String
            var message: String
            var field: String?
        }
        var error: Detail
        var requestID: String
    }
}
