package import Hummingbird
package import Logging

/// Logs one line per request: the method, the path, the names of the query parameters (their
/// values redacted: query strings carry tokens and keys), the status and the duration.
///
/// Used instead of Hummingbird's `LogRequestsMiddleware`, which logs the whole URI, query
/// values included.
package struct RequestLogMiddleware<Context: RequestContext>: RouterMiddleware {
    package var level: Logger.Level

    /// Logs each request at `level`.
    package init(level: Logger.Level) {
        self.level = level
    }

    @concurrent
    package func handle(
        _ request: Request,
        context: Context,
        next: @concurrent (Request, Context) async throws -> Response
    )
        async throws -> Response
    {
        let start = ContinuousClock.now
        let target = Self.redacted(path: request.uri.path, query: request.uri.query)
        do {
            let response = try await next(request, context)
            log(request, target, status: response.status.code, since: start, context: context)
            return response
        } catch let error as any HTTPResponseError {
            log(request, target, status: error.status.code, since: start, context: context)
            throw error
        } catch {
            log(request, target, status: 500, since: start, context: context)
            throw error
        }
    }

    private func log(
        _ request: Request,
        _ target: String,
        status: Int,
        since start: ContinuousClock.Instant,
        context: Context
    ) {
        context.logger.log(
            level: level,
            "\(request.method) \(target) -> \(status) in \(ContinuousClock.now - start)"
        )
    }

    /// The path, and each query parameter's name with its value replaced by `…`.
    package static func redacted(path: String, query: String?) -> String {
        guard let query, !query.isEmpty else { return path }
        let names = query.split(separator: "&")
            .map { parameter in
                "\(parameter.split(separator: "=", maxSplits: 1).first ?? "")=…"
            }
        return "\(path)?\(names.joined(separator: "&"))"
    }
}
