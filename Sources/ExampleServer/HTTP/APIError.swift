import Hummingbird

/// An error the API reports to the client: a status, a stable code, a message, and the field
/// at fault when there is one.
struct APIError: Error, Sendable, CustomStringConvertible {
    var status: HTTPResponse.Status
    var code: String
    var message: String
    var field: String?

    var description: String { "\(status.code) \(code): \(message)" }

    static func badRequest(_ message: String, field: String? = nil, code: String = "bad_request") -> APIError {
        APIError(status: .badRequest, code: code, message: message, field: field)
    }

    static func invalidField(_ field: String, _ message: String) -> APIError {
        APIError(status: .unprocessableContent, code: "invalid_field", message: message, field: field)
    }

    static func notFound(_ message: String) -> APIError {
        APIError(status: .notFound, code: "not_found", message: message)
    }
}

/// The JSON body of every error response.
struct ErrorBody: Codable, Sendable {
    struct Detail: Codable, Sendable {
        var code: String
        var message: String
        var field: String?
    }

    var error: Detail
    var requestID: String
}
