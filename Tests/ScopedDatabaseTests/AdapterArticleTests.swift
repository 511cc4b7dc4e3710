import NIOCore
import NIOHTTP1
import NIOPosix
import Scoped
import ScopedSQLite
import ScopedTestSupport
import SessionTestSupport
import Testing

// SNIPPET-BEGIN
/// What the application gives the adapter for each request: a status, and a body that writes
/// its chunks with the function it is given.
struct PlainResponse: Sendable {
    var status: HTTPResponseStatus
    var body: @Sendable (_ write: (ByteBuffer) async throws -> Void) async throws -> Void
}
// SNIPPET-END

// SNIPPET-BEGIN
/// Serves one HTTP/1.1 connection, each request in a scope of its own, a child of `root`.
func serve(
    _ connection: NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>,
    root: ScopeRoot,
    handler: @escaping @Sendable (HTTPRequestHead) async throws -> PlainResponse
) async throws {
    try await connection.executeThenClose { inbound, outbound in
        for try await part in inbound {
            guard case .head(let head) = part else { continue }
            // 1. The request-ID rule: a client's valid ID, else a new one.
            let requestID = RequestIDs.accepting(head.headers.first(name: "X-Request-ID") ?? "") ?? RequestIDs.next()
            let scope = root.openScope { $0.requestID = requestID }
            var headers = HTTPHeaders([("X-Request-ID", requestID)])

            // 2. The handler runs in the scope; when it throws, the scope closes as a failure.
            let response: PlainResponse
            do {
                response = try await scope.runClosingOnFailure { try await handler(head) }
            } catch {
                headers.add(name: "Content-Length", value: "0")
                let head = HTTPResponseHead(version: .http1_1, status: .internalServerError, headers: headers)
                try await outbound.write(.head(head))
                try await outbound.write(.end(nil))
                continue
            }

            // 3. The body streams in the scope; its last chunk goes out after the commit.
            headers.add(name: "Transfer-Encoding", value: "chunked")
            let responseHead = HTTPResponseHead(version: .http1_1, status: response.status, headers: headers)
            try await outbound.write(.head(responseHead))
            let body = HeldBackBody<ByteBuffer>(scope: scope)
            do {
                try await scope.run {
                    try await response.body { chunk in
                        if let previous = body.hold(chunk) {
                            try await body.sending { try await outbound.write(.body(.byteBuffer(previous))) }
                        }
                    }
                }
                if let last = try await body.finish() {
                    try await body.sending { try await outbound.write(.body(.byteBuffer(last))) }
                }
                try await outbound.write(.end(nil))
            } catch {
                // The body or the commit failed: the connection ends, the body cut short.
                await body.fail(with: error)
                throw error
            }
        }
    }
}
// SNIPPET-END

// SNIPPET-BEGIN
/// Listens on 127.0.0.1:`port` and serves every connection until the task is cancelled.
func runPlainServer(
    root: ScopeRoot,
    port: Int = 0,
    onListening: (Int) -> Void = { _ in },
    handler: @escaping @Sendable (HTTPRequestHead) async throws -> PlainResponse
) async throws {
    let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        .bind(host: "127.0.0.1", port: port) { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                return try NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>(
                    wrappingChannelSynchronously: channel
                )
            }
        }
    onListening(server.channel.localAddress?.port ?? port)
    try await withThrowingDiscardingTaskGroup { connections in
        try await server.executeThenClose { inbound in
            for try await connection in inbound {
                connections.addTask { try? await serve(connection, root: root, handler: handler) }
            }
        }
    }
}
// SNIPPET-END

/// The adapter article's worked example, a plain SwiftNIO server, serving a real SQLite file.
@Suite(.serialized)
struct AdapterArticleTests {
    struct Refused: Error {}

    /// `POST /notes/<title>` inserts the title in the request's session and answers in three
    /// chunks; `POST /fail/<title>` inserts, then throws.
    @Sendable private static func handle(_ head: HTTPRequestHead) async throws -> PlainResponse {
        let parts = head.uri.split(separator: "/").map(String.init)
        let session = try await ScopedValues.current.sqliteSession
        try await session.execute("INSERT INTO items (name) VALUES (\(parts[1]))")
        if parts[0] == "fail" { throw Refused() }
        let requestID = ScopedValues.current.requestID ?? "none"
        return PlainResponse(status: .ok) { write in
            // Read in the request's scope: the body sees its own insert.
            let rows = try await ScopedValues.current.sqliteSession.query("SELECT count(*) AS n FROM items")
            let count = try rows.first?.get("n", as: Int.self)
            for text in ["saved ", parts[1], " (\(count ?? -1) rows, \(requestID))"] {
                try await write(ByteBuffer(string: text))
            }
        }
    }

    @Test func theWorkedExampleCommitsEachRequestRollsBackAFailureAndAppliesTheRequestIDRule() async throws {
        try await SessionBackend.sqlite.withRoot { root in
            let listening = AsyncStream<Int>.makeStream()
            let server = Task {
                try await runPlainServer(root: root, onListening: { listening.continuation.yield($0) }) {
                    try await Self.handle($0)
                }
            }
            var ports = listening.stream.makeAsyncIterator()
            let port = try #require(await ports.next())
            func send(_ target: String, requestID: String) async throws -> String {
                let connection = try await RawHTTPConnection(port: port)
                return try await connection.exchange(
                    "POST \(target) HTTP/1.1\r\nHost: test\r\nX-Request-ID: \(requestID)\r\nContent-Length: 0\r\n\r\n"
                ) { $0.hasSuffix("\r\n0\r\n\r\n") || $0.contains("Content-Length: 0\r\n\r\n") }
            }

            let saved = try await send("/notes/milk", requestID: "client-1")
            #expect(saved.hasPrefix("HTTP/1.1 200 OK"))
            #expect(RawHTTPConnection.chunkedBody(of: saved) == "saved milk (1 rows, client-1)")
            // Committed before the last chunk went out: a new scope sees it at once.
            #expect(try await root.withScope { try await SessionBackend.sqlite.session().names() } == ["milk"])

            let failed = try await send("/fail/bread", requestID: "client-2")
            #expect(failed.hasPrefix("HTTP/1.1 500 Internal Server Error"))
            #expect(try await root.withScope { try await SessionBackend.sqlite.session().names() } == ["milk"])

            // A forged ID (a space and a quote could forge a log line) is replaced.
            let forged = try await send("/notes/tea", requestID: "x\"y z")
            let newID = try #require(forged.split(separator: "\r\n").first { $0.hasPrefix("X-Request-ID: ") })
            #expect(newID.count == "X-Request-ID: ".count + 32)
            #expect(RawHTTPConnection.chunkedBody(of: forged)?.contains("x\"y") == false)

            #expect(await eventually { root.openScopeCount == 0 })
            server.cancel()
            _ = try? await server.value
        }
    }

    @Test func theArticleShowsThisFilesSnippets() throws {
        let article = try ArticleSnippets.inArticle("Sources/Scoped/Scoped.docc/WritingAnAdapter.md")
        #expect(article == (try ArticleSnippets.marked()))
    }
}
