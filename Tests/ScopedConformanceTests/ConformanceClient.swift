import Foundation
import ScopedTestSupport
import Testing

/// The conformance app's insert, as a client of one stack (or of WebSocket messages) sends it.
protocol InsertingClient: Sendable {
    /// Sends an insert of `name` with `requestID` as the client's request ID; `mode` says what
    /// the handler does after its insert.
    func insert(_ name: String, mode: InsertMode, requestID: String?) async throws -> InsertResponse
}

/// The conformance app's three operations, as a client of one request stack sends them.
protocol ConformanceClient: InsertingClient {

    /// Reads a whole export of `name` in `chunks` chunks, and returns the moment it has the
    /// response's last byte; `lengthKnown` asks for the body's length in the response's head
    /// (a stack with no such notion ignores it).
    func export(_ name: String, chunks: Int, lengthKnown: Bool) async throws -> ExportResponse

    /// Starts an endless stream for `name`, reads its first lines, then goes away.
    ///
    /// - Returns: the lines read.
    func leaveMidStream(_ name: String) async throws -> [String]
}

extension InsertingClient {
    /// Sends an insert of `name` that answers.
    func insert(_ name: String, requestID: String? = nil) async throws -> InsertResponse {
        try await insert(name, mode: .plain, requestID: requestID)
    }
}

/// What the client saw of an insert.
enum InsertResponse: Sendable, Equatable {
    /// A success, with the handler's answer.
    case answered(Answer)
    /// An error status (HTTP 4xx/5xx, or a gRPC status other than `ok`).
    case refused
}

/// What the client saw of an export.
struct ExportResponse: Sendable {
    /// Whether the response ended as a complete one (its last chunk, or the RPC's `ok`).
    var isComplete: Bool
    /// The body's bytes.
    var body: [UInt8]
}

/// The client of the HTTP stacks: a plain socket, so that it can go away at any byte.
struct HTTPConformanceClient: ConformanceClient {
    let port: Int

    func insert(_ name: String, mode: InsertMode, requestID: String?) async throws -> InsertResponse {
        let query = mode == .plain ? "" : "?mode=\(mode.rawValue)"
        let idHeader = requestID.map { "X-Request-ID: \($0)\r\n" } ?? ""
        let response = try await RawHTTPConnection(port: port)
            .exchange(
                "POST /items/\(name)\(query) HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\(idHeader)Content-Length: 0\r\n\r\n"
            )
        let (status, body) = try Self.parse(response)
        guard (200..<300).contains(status) else { return .refused }
        return .answered(try JSONDecoder().decode(Answer.self, from: Data(try #require(body).utf8)))
    }

    func export(_ name: String, chunks: Int, lengthKnown: Bool) async throws -> ExportResponse {
        let response = try await RawHTTPConnection(port: port)
            .exchange(
                "GET /export/\(name)?chunks=\(chunks)&known=\(lengthKnown) HTTP/1.1\r\nHost: test\r\n\r\n",
                timeout: .seconds(30),
                until: Self.isComplete
            )
        let (status, body) = try Self.parse(response)
        return ExportResponse(isComplete: status == 200 && body != nil, body: Array((body ?? "").utf8))
    }

    func leaveMidStream(_ name: String) async throws -> [String] {
        let received = try await RawHTTPConnection(port: port)
            .exchange("GET /endless/\(name) HTTP/1.1\r\nHost: test\r\n\r\n") { $0.contains("line 4 ") }
        // Whole lines only: the read stops wherever a packet ends.
        return received.matches(of: /line \d+ of \d+\n/).map { String($0.output) }
    }

    /// Whether `response` holds a whole response.
    ///
    /// That is all of a body of known length, or a chunked body's last chunk: a client can rely
    /// on a response from that byte on.
    static func isComplete(_ response: String) -> Bool {
        guard let headEnd = response.range(of: "\r\n\r\n") else { return false }
        let head = response[..<headEnd.lowerBound].lowercased()
        if head.contains("transfer-encoding: chunked") { return response.hasSuffix("\r\n0\r\n\r\n") }
        guard let length = contentLength(in: head) else { return false }
        return response.utf8.count - response.utf8.distance(from: response.startIndex, to: headEnd.upperBound) >= length
    }

    private static func contentLength(in head: String) -> Int? {
        head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
            .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) }
    }

    /// A response's status and body; the body is `nil` when the response was cut short.
    static func parse(_ response: String) throws -> (status: Int, body: String?) {
        guard let headEnd = response.range(of: "\r\n\r\n") else { return (0, nil) }
        let head = response[..<headEnd.lowerBound].lowercased()
        let statusText = head.split(separator: " ").dropFirst().first.map(String.init) ?? ""
        let status = try #require(Int(statusText), "a status line in \(head)")
        if head.contains("transfer-encoding: chunked") {
            return (status, RawHTTPConnection.chunkedBody(of: response))
        }
        let body = String(response[headEnd.upperBound...])
        if let length = contentLength(in: head), body.utf8.count != length { return (status, nil) }
        return (status, body)
    }
}
