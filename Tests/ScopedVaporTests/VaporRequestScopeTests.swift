import Foundation
import NIOCore
import Scoped
import ScopedTestSupport
import ScopedVapor
import SessionTestSupport
import Testing
import Vapor
import VaporTesting

/// Replaces the response of `/dropped` with its own, as a middleware that drops a response
/// would: the request scope's body is then never written.
struct ResponseDroppingMiddleware: AsyncMiddleware {
    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        let response = try await next.respond(to: request)
        return request.url.path == "/dropped" ? Response(status: .accepted) : response
    }
}

/// Vapor's request scopes: what a request reads, and when and how its scope closes.
struct VaporRequestScopeTests {
    private func makeRoot() -> (ScopeRoot, CloseLog) {
        let log = CloseLog()
        return (ScopeRoot { $0.closeLog = log }, log)
    }

    /// A scoped streamed body whose writer reads the request's resource for every line it writes.
    private static func lines(_ count: Int, pause: Duration? = nil) -> Response.Body {
        .init(scopedAsyncStream: { writer in
            for line in 0..<count {
                _ = try await ScopedValues.current.service(LoggedResourceKey.self)
                try await writer.write(.buffer(ByteBuffer(string: "line \(line)\n")))
                if let pause { try await Task.sleep(for: pause) }
            }
            try await writer.write(.end)
        })
    }

    private func routes(_ app: Application) {
        app.get("echo") { _ async throws -> ScopeEcho in
            ScopeEcho(requestID: ScopedValues.current.requestID, tag: ScopedValues.current.tag)
        }
        app.get("logged-id") { request async throws -> [String] in
            [ScopedValues.current.requestID ?? "", request.logger[metadataKey: "request-id"].map { "\($0)" } ?? ""]
        }
        app.get("short") { _ async throws -> String in
            _ = try await ScopedValues.current.service(LoggedResourceKey.self)
            return "short"
        }
        app.get("stream") { _ async throws -> Response in
            _ = try await ScopedValues.current.service(LoggedResourceKey.self)
            return Response(status: .ok, body: Self.lines(3))
        }
        app.get("endless") { _ async throws -> Response in
            Response(status: .ok, body: Self.lines(.max, pause: .milliseconds(5)))
        }
        app.get("known-length") { _ async throws -> Response in
            // A stream of known length, short enough to be produced before the response is sent.
            Response(
                status: .ok,
                body: .init(
                    asyncStream: { writer in
                        _ = try await ScopedValues.current.service(LoggedResourceKey.self)
                        try await writer.write(.buffer(ByteBuffer(string: "0123456789")))
                        try await writer.write(.end)
                    },
                    count: 10
                )
            )
        }
        app.get("callback-stream") { request async throws -> Response in
            _ = try await ScopedValues.current.service(LoggedResourceKey.self)
            let eventLoop = request.eventLoop
            // A plain callback-style stream of unknown length: written after its scope closed.
            return Response(
                status: .ok,
                body: .init(stream: { writer in
                    writer.write(.buffer(ByteBuffer(string: "a\n")))
                        .flatMap {
                            eventLoop.scheduleTask(in: .milliseconds(20)) {}.futureResult
                        }
                        .flatMap {
                            writer.write(.buffer(ByteBuffer(string: "b\n")))
                        }
                        .whenComplete { _ in
                            writer.write(.end, promise: nil)
                        }
                })
            )
        }
        app.get("dropped") { _ async throws -> Response in
            _ = try await ScopedValues.current.service(LoggedResourceKey.self)
            return Response(status: .ok, body: Self.lines(3))
        }
        app.get("conflict") { _ async throws -> String in
            _ = try await ScopedValues.current.service(LoggedResourceKey.self)
            throw Abort(.conflict, reason: "taken")
        }
    }

    @Test func aRequestReadsItsOwnScopeHoldingVaporsRequestIDOverVaporsTestingLibrary() async throws {
        let (root, _) = makeRoot()
        try await withTestingApp { app in
            app.middleware.use(
                RequestScopeMiddleware(root: root) { values, request in
                    values.tag = request.headers.first(name: "X-Tag")
                }
            )
            routes(app)
            try await app.testing(method: .running(hostname: "127.0.0.1", port: 0))
                .test(.GET, "echo", headers: ["X-Request-Id": "client-7", "X-Tag": "blue"]) { response in
                    #expect(response.status == .ok)
                    let echo = try response.content.decode(ScopeEcho.self)
                    #expect(echo.requestID == "client-7")
                    #expect(echo.tag == "blue")
                }
        }
        #expect(root.openScopeCount == 0)
    }

    /// A client's `X-Request-Id` that could forge a log line (Vapor copies it into `Request.id`
    /// unchecked) is replaced, in the scope and in the request logger's metadata, by an ID of
    /// the library's own; a valid one is kept in both.
    @Test func aForgedRequestIDIsReplacedInTheScopeAndInVaporsLogger() async throws {
        let root = ScopeRoot()
        try await withTestingApp { app in
            app.middleware.use(RequestScopeMiddleware(root: root))
            routes(app)
            let client = try app.testing(method: .running(hostname: "127.0.0.1", port: 0))
            let forged = "x\" level=critical msg=\"forged " + String(repeating: "z", count: 80)
            try await client.test(.GET, "logged-id", headers: ["X-Request-Id": forged]) { response in
                let ids = try response.content.decode([String].self)
                #expect(ids[0] != forged && ids[0].count == 32 && ids[0].allSatisfy(\.isHexDigit))
                #expect(ids[1] == ids[0])
            }
            try await client.test(.GET, "logged-id", headers: ["X-Request-Id": "client-7.a_b"]) { response in
                let ids = try response.content.decode([String].self)
                #expect(ids == ["client-7.a_b", "client-7.a_b"])
            }
        }
        await root.shutdown()
    }

    /// What the middleware's documentation warns of: a synchronous handler reads no scope.
    ///
    /// Vapor calls a synchronous handler of a request without a collected body from an
    /// event-loop callback, outside the request's task. The same handler written `async` reads
    /// the request's scope.
    @Test func onlyAnAsyncHandlerReadsTheRequestsScope() async throws {
        let (root, _) = makeRoot()
        try await withServingApp(root: root) { app in
            app.get("sync") { _ -> ScopeEcho in
                ScopeEcho(requestID: ScopedValues.current.requestID, tag: ScopedValues.current.tag)
            }
            app.get("async") { _ async -> ScopeEcho in
                ScopeEcho(requestID: ScopedValues.current.requestID, tag: ScopedValues.current.tag)
            }
        } _: { app, port in
            for (path, readsScope) in [("sync", false), ("async", true)] {
                let response = try await app.client.get(
                    "http://127.0.0.1:\(port)/\(path)",
                    headers: ["X-Request-Id": "r-\(path)", "X-Tag": "blue"]
                )
                let echo = try response.content.decode(ScopeEcho.self)
                #expect((echo.requestID == "r-\(path)") == readsScope, "\(path): \(echo)")
                #expect((echo.tag == "blue") == readsScope, "\(path): \(echo)")
            }
        }
        #expect(root.openScopeCount == 0)
    }

    @Test func aShortBodyClosesItsScopeBeforeTheResponseAndAFailedCommitIsTheRequestsError() async throws {
        let (root, log) = makeRoot()
        try await withServingApp(root: root, routes: routes) { app, port in
            let response = try await app.client.get("http://127.0.0.1:\(port)/short")
            #expect(response.status == .ok)
            #expect(response.body.map { String(buffer: $0) } == "short")
            #expect(log.all == ["success"])

            let failed = try await app.client.get("http://127.0.0.1:\(port)/short", headers: ["X-Fail-Commit": "1"])
            #expect(failed.status == .internalServerError)
            #expect(log.all == ["success", "success"])  // the outcome it was told; its close then threw

            let known = try await app.client.get("http://127.0.0.1:\(port)/known-length")
            #expect(known.body.map { String(buffer: $0) } == "0123456789")
            #expect(log.all == ["success", "success", "success"])
        }
        #expect(root.openScopeCount == 0)
    }

    @Test func aStreamedBodyReadsTheRequestsScopeWhichClosesOnceAfterIt() async throws {
        let (root, log) = makeRoot()
        try await withServingApp(root: root, routes: routes) { app, port in
            let response = try await app.client.get("http://127.0.0.1:\(port)/stream")
            #expect(response.status == .ok)
            #expect(response.body.map { String(buffer: $0) } == "line 0\nline 1\nline 2\n")
            #expect(log.all == ["success"])

            let callback = try await app.client.get("http://127.0.0.1:\(port)/callback-stream")
            #expect(callback.body.map { String(buffer: $0) } == "a\nb\n")
            #expect(log.all == ["success", "success"])
        }
        #expect(root.openScopeCount == 0)
    }

    @Test func aCommitThatFailsCutsAStreamedResponseShort() async throws {
        let (root, log) = makeRoot()
        try await withServingApp(root: root, routes: routes) { _, port in
            let connection = try await RawHTTPConnection(port: port)
            let received = try await connection.exchange(
                "GET /stream HTTP/1.1\r\nHost: test\r\nConnection: close\r\nX-Fail-Commit: 1\r\n\r\n"
            )
            #expect(received.contains("line 1\n"))
            // The last line was held back until the scope closed, and the close failed.
            #expect(!received.contains("line 2"))
            #expect(RawHTTPConnection.chunkedBody(of: received) == nil)
        }
        #expect(log.all == ["success"])
        #expect(root.openScopeCount == 0)
    }

    @Test func aClientThatDisconnectsMidBodyClosesTheScopeAsCancelled() async throws {
        let (root, log) = makeRoot()
        try await withServingApp(root: root, routes: routes) { _, port in
            let connection = try await RawHTTPConnection(port: port)
            let received = try await connection.exchange("GET /endless HTTP/1.1\r\nHost: test\r\n\r\n") {
                $0.contains("line 3\n")
            }
            #expect(received.hasPrefix("HTTP/1.1 200 OK"))
            #expect(await eventually { !log.all.isEmpty })
            #expect(log.all == ["cancelled"])
            #expect(await eventually { root.openScopeCount == 0 })
        }
    }

    @Test func aResponseThatIsNeverWrittenStillClosesItsScopeAsCancelled() async throws {
        let (root, log) = makeRoot()
        try await withTestingApp { app in
            app.middleware.use(ResponseDroppingMiddleware())
            app.middleware.use(RequestScopeMiddleware(root: root))
            routes(app)
            try await app.testing()
                .test(.GET, "dropped") { response in
                    #expect(response.status == .accepted)
                }
        }
        #expect(await eventually { root.openScopeCount == 0 })
        #expect(log.all == ["cancelled"])
    }

    @Test func errorsPassThroughWithTheirStatusAndCloseTheScopeAsAFailure() async throws {
        let (root, log) = makeRoot()
        try await withTestingApp { app in
            app.middleware.use(
                RequestScopeMiddleware(root: root) { _, request in
                    if request.headers.first(name: "X-Refuse") != nil { throw Abort(.forbidden) }
                }
            )
            routes(app)
            let tester = try app.testing()
            try await tester.test(.GET, "conflict") { response in
                #expect(response.status == .conflict)
                #expect(response.body.string.contains("taken"))
            }
            try await tester.test(.GET, "echo", headers: ["X-Refuse": "1"]) { response in
                #expect(response.status == .forbidden)
            }
        }
        #expect(log.all == ["failure"])
        #expect(root.openScopeCount == 0)
    }
}

/// An app service whose close records its outcome.
enum ClosingAppServiceKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.app
    static func makeValue() async throws -> CloseLog { ScopedValues.current.closeLog! }
    static func close(_ log: CloseLog, outcome: ScopeOutcome) async throws { log.record(outcome) }
}
