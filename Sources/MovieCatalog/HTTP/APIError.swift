import Foundation
package import Hummingbird
package import Logging
package import OpenAPIRuntime
import Scoped
import ScopedDatabase
import ScopedPostgres
import ScopedSQLite
import ScopedTenants

/// An error the API reports to the client: a status, a stable code, a message, and the field
/// at fault when there is one.
///
/// It is an `HTTPResponseError`, so every middleware that looks at a failed request (the
/// request log, Hummingbird's `MetricsMiddleware` and `TracingMiddleware`) sees its real
/// status. ``init(_:logger:)`` is the one place that decides the status of any other error.
package struct APIError: HTTPResponseError, Sendable, CustomStringConvertible {
    package var status: HTTPResponse.Status
    package var code: String
    package var message: String
    package var field: String?
    /// Extra response headers, such as `Allow` on a 405.
    package var headers: HTTPFields = [:]

    package var description: String { "\(status.code) \(code): \(message)" }

    package init(
        status: HTTPResponse.Status,
        code: String,
        message: String,
        field: String? = nil,
        headers: HTTPFields = [:]
    ) {
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.headers = headers
    }

    package static func badRequest(_ message: String, field: String? = nil, code: String = "bad_request") -> APIError {
        APIError(status: .badRequest, code: code, message: message, field: field)
    }

    package static func invalidField(_ field: String, _ message: String) -> APIError {
        APIError(status: .unprocessableContent, code: "invalid_field", message: message, field: field)
    }

    package static func notFound(_ message: String) -> APIError {
        APIError(status: .notFound, code: "not_found", message: message)
    }

    package static func methodNotAllowed(_ method: HTTPRequest.Method, allowed: [HTTPRequest.Method]) -> APIError {
        let allow = allowed.map(\.rawValue).joined(separator: ", ")
        return APIError(
            status: .methodNotAllowed,
            code: "method_not_allowed",
            message: "\(method.rawValue) is not served here; allowed: \(allow).",
            headers: [.allow: allow]
        )
    }

    /// The API error for any error a request threw: itself when it is one, the input at fault
    /// when the generated server could not decode the request, its status for
    /// Hummingbird's errors, 503 when the database is busy, unavailable or did not answer in
    /// time or a service's close was abandoned, or a tenant is unavailable or cannot open for
    /// lack of room, 507 when its disk is full, 409 for a broken PostgreSQL constraint, and 500
    /// otherwise (logged, with a message that reveals nothing).
    package init(_ error: any Error, logger: Logger) {
        switch error {
        case let error as APIError:
            self = error
        case let error as ServerError where error.operationInput == nil:
            // The generated server could not decode the request into its operation's input.
            self = RequestInput.apiError(forUndecodable: error, body: nil)
        case let error as ServerError where (400..<500).contains(error.httpStatus.code):
            self = .refused(by: error)
        case let error as ServerError:
            // A handler's own error, wrapped by the generated server.
            self.init(error.underlyingError, logger: logger)
        case let error as any HTTPResponseError where error.status == .contentTooLarge:
            self.init(
                status: .contentTooLarge,
                code: "payload_too_large",
                message: "The body is larger than \(RequestInput.maximumBodySize) bytes."
            )
        case let error as HTTPError:
            self.init(
                status: error.status,
                code: "http_\(error.status.code)",
                message: error.body ?? error.status.reasonPhrase
            )
        case let error as TenantUnavailableError:
            // The tenant's own database would not open or migrate: its requests alone fail,
            // and its next request tries again.
            logger.error("Tenant unavailable: \(error)", metadata: ["tenant": "\(error.tenant)"])
            self.init(
                status: .serviceUnavailable,
                code: "tenant_unavailable",
                message: "Tenant \(error.tenant) is unavailable; retry shortly."
            )
        case let error as TenantCapacityError:
            let limit = error.limit
            logger.warning("Tenant capacity reached: \(limit) tenants open, each busy")
            self.init(
                status: .serviceUnavailable,
                code: "tenant_capacity",
                message: "The server has \(limit) tenants open, all busy; retry shortly."
            )
        default:
            let underlying = (error as? ScopeCloseError)?.failures.map(\.error) ?? [error]
            if let timeout = underlying.lazy.compactMap({ $0 as? DatabaseTimeoutError }).first {
                logger.warning("Database timeout: \(timeout)")
                self.init(
                    status: .serviceUnavailable,
                    code: "database_timeout",
                    message: "The database did not answer in time; retry shortly."
                )
            } else if let database = underlying.lazy.compactMap({ $0 as? PostgresDatabaseError }).first {
                self.init(database, logger: logger)
            } else if underlying.contains(where: { ($0 as? SQLiteError)?.code == .full }) {
                self = .storageFull(error, logger: logger)
            } else if let timeout = underlying.lazy.compactMap({ $0 as? ScopeCloseError.Timeout }).first {
                // The work may or may not have been done: not a success, and worth a retry.
                logger.warning("Close timeout: \(timeout)")
                self.init(
                    status: .serviceUnavailable,
                    code: "close_timeout",
                    message: "A service did not finish closing in time; the request's outcome is unknown."
                )
            } else if underlying.contains(where: { ($0 as? SQLiteError)?.code == .busy }) {
                logger.warning("Database busy: \(error)")
                self.init(status: .serviceUnavailable, code: "busy", message: "The database is busy; retry shortly.")
            } else {
                logger.error(
                    "Request failed: \(error)",
                    metadata: ["error.type": .string(String(reflecting: type(of: error)))]
                )
                self.init(
                    status: .internalServerError,
                    code: "internal_error",
                    message: "The server could not complete the request."
                )
            }
        }
    }

    /// The generated server's own refusal of a request, with the status it chose and its
    /// description of the cause.
    package static func refused(by error: ServerError) -> APIError {
        APIError(status: error.httpStatus, code: "http_\(error.httpStatus.code)", message: error.causeDescription)
    }

    /// The API error for a PostgreSQL error: 409 for a constraint the request broke, 503 for a
    /// conflict to retry, a lost connection or a full server, 500 otherwise (logged).
    private init(_ error: PostgresDatabaseError, logger: Logger) {
        switch error.kind {
        case .uniqueViolation, .foreignKeyViolation:
            self.init(status: .conflict, code: "conflict", message: "The change conflicts with the catalog's data.")
        case .serializationFailure:
            logger.warning("Database conflict: \(error)")
            self.init(status: .serviceUnavailable, code: "busy", message: "The database is busy; retry shortly.")
        case .diskFull:
            self = .storageFull(error, logger: logger)
        case .connectionLost, .tooManyConnections:
            logger.warning("Database unavailable: \(error)")
            self.init(
                status: .serviceUnavailable,
                code: "database_unavailable",
                message: "The database is unavailable; retry shortly."
            )
        case .other:
            logger.error("Request failed: \(error)")
            self.init(
                status: .internalServerError,
                code: "internal_error",
                message: "The server could not complete the request."
            )
        }
    }

    /// 507: the database's disk is full; reads go on, and writes work again once space is freed.
    private static func storageFull(_ error: any Error, logger: Logger) -> APIError {
        logger.error("Database storage full: \(error)")
        return APIError(
            status: HTTPResponse.Status(code: 507, reasonPhrase: "Insufficient Storage"),
            code: "storage_full",
            message: "The database's storage is full; the change was not saved."
        )
    }

    /// The JSON error body, naming the request (or the WebSocket connection) it answers.
    package func body(requestID: String) -> ErrorBody {
        ErrorBody(error: .init(code: code, message: message, field: field), requestID: requestID)
    }

    /// The JSON error body, naming the request, with this error's status and headers.
    package func response(from request: Request, context: some RequestContext) throws -> Response {
        try JSONResponse.make(body(requestID: context.id), status: status, headers: headers)
    }
}

/// The JSON body of every error response.
package struct ErrorBody: Codable, Sendable {
    package struct Detail: Codable, Sendable {
        package var code: String
        package var message: String
        package var field: String?
    }

    package var error: Detail
    package var requestID: String
}
