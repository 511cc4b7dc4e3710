import Foundation
import Hummingbird
import Logging
import Scoped
import ScopedSQLite

/// JSON responses, encoded the same way everywhere.
enum JSONResponse {
    static func make(
        _ value: some Encodable,
        status: HTTPResponse.Status = .ok,
        headers: HTTPFields = [:]
    ) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var headers = headers
        headers[.contentType] = "application/json; charset=utf-8"
        let data = try encoder.encode(value)
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// The response for an error a request threw, naming the request.
    static func error(_ error: any Error, requestID: String, logger: Logger) -> Response {
        let apiError: APIError
        switch error {
        case let error as APIError:
            apiError = error
        case let error as HTTPError:
            apiError = APIError(
                status: error.status,
                code: error.status == .contentTooLarge ? "payload_too_large" : "http_\(error.status.code)",
                message: error.body ?? error.status.reasonPhrase,
                field: nil
            )
        case let error as any HTTPResponseError where error.status == .contentTooLarge:
            apiError = APIError(
                status: .contentTooLarge,
                code: "payload_too_large",
                message: "The body is larger than \(AppConfiguration.maximumBodySize) bytes.",
                field: nil
            )
        default:
            apiError = Self.serverError(error, logger: logger)
        }
        let body = ErrorBody(
            error: .init(code: apiError.code, message: apiError.message, field: apiError.field),
            requestID: requestID
        )
        return (try? make(body, status: apiError.status)) ?? Response(status: .internalServerError)
    }

    private static func serverError(_ error: any Error, logger: Logger) -> APIError {
        let underlying = (error as? ScopeCloseError)?.failures.map(\.error) ?? [error]
        if underlying.contains(where: { ($0 as? SQLiteError)?.code == .busy }) {
            logger.warning("Database busy: \(error)")
            return APIError(status: .serviceUnavailable, code: "busy", message: "The database is busy; retry shortly.")
        }
        logger.error("Request failed: \(error)")
        return APIError(
            status: .internalServerError,
            code: "internal_error",
            message: "The server could not complete the request."
        )
    }
}
