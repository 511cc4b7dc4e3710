import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Scoped
import ScopedHummingbird
import ScopedTestSupport
import Synchronization
import Testing

/// A request resource that counts its builds; its close records the outcome it was told, and
/// throws when the request asked it to.
final class BodyResource: Sendable {
    let id: Int
    init(id: Int) { self.id = id }
}

extension ScopedValues {
    @Entry var builds: Recorder<Int>? = nil
    @Entry var failsToCommit: Bool = false
}

enum BodyResourceKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.scope
    static func makeValue() async throws -> BodyResource {
        let builds = ScopedValues.current.builds!
        builds.record(builds.all.count + 1)
        return BodyResource(id: builds.all.count)
    }
    static func close(_ resource: BodyResource, outcome: ScopeOutcome) async throws {
        ScopedValues.current.closeLog!.record(outcome)
        if ScopedValues.current.failsToCommit { throw CommitFailed() }
    }
}

struct CommitFailed: Error {}

/// Replaces the response of `/dropped` with its own, as a middleware that drops a response
/// would: the request scope's body is then never written.
struct ResponseDroppingMiddleware<Context: RequestContext>: RouterMiddleware {
    @concurrent
    func handle(_ request: Request, context: Context, next: @concurrent (Request, Context) async throws -> Response)
        async throws -> Response
    {
        let response = try await next(request, context)
        return request.uri.path == "/dropped" ? Response(status: .accepted) : response
    }
}

/// Request scopes stay open until their response body has been written.
struct ResponseBoundScopeTests {
    private func makeRouter(root: ScopeRoot) -> Router<BasicRequestContext> {
        let router = Router()
        router.add(middleware: RequestIDMiddleware())
        router.add(middleware: ResponseDroppingMiddleware())
        router.add(
            middleware: RequestScopeMiddleware(root: root) { values, request, _ in
                values.failsToCommit = request.headers[HTTPField.Name("X-Fail-Commit")!] != nil
            }
        )
        router.get("/stream") { _, _ in try await Self.streamLines(count: 3) }
        router.get("/dropped") { _, _ in try await Self.streamLines(count: 3) }
        router.get("/short") { _, _ in
            let body = ResponseBody(contentLength: 4) { writer in
                let resource = try await ScopedValues.current.service(BodyResourceKey.self)
                try await writer.write(ByteBuffer(string: "id "))
                try await writer.write(ByteBuffer(string: "\(resource.id)"))
                try await writer.finish(nil)
            }
            return Response(status: .ok, body: body)
        }
        router.get("/endless") { _, _ in try await Self.streamLines(count: .max, pause: .milliseconds(5)) }
        return router
    }

    /// A streamed body whose writer reads the request's resource for every line it writes.
    private static func streamLines(count: Int, pause: Duration? = nil) async throws -> Response {
        let handlerResource = try await ScopedValues.current.service(BodyResourceKey.self)
        let body = ResponseBody { writer in
            for line in 0..<count {
                let resource = try await ScopedValues.current.service(BodyResourceKey.self)
                try await writer.write(ByteBuffer(string: "\(handlerResource.id) \(resource.id) line \(line)\n"))
                if let pause { try await Task.sleep(for: pause) }
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: [.contentType: "text/plain"], body: body)
    }

    private func makeRoot() -> (ScopeRoot, CloseLog, Recorder<Int>) {
        let log = CloseLog()
        let builds = Recorder<Int>()
        let root = ScopeRoot {
            $0.closeLog = log
            $0.builds = builds
        }
        return (root, log, builds)
    }

    @Test func aStreamedBodyReadsTheRequestsScopeWhichClosesOnceAfterTheBody() async throws {
        let (root, log, builds) = makeRoot()
        try await Application(router: makeRouter(root: root))
            .test(.live) { client in
                try await client.execute(uri: "/stream", method: .get) { response in
                    #expect(response.status == .ok)
                    // One resource, built by the handler and read by the body's writer.
                    #expect(String(buffer: response.body) == "1 1 line 0\n1 1 line 1\n1 1 line 2\n")
                }
            }
        #expect(builds.all == [1])
        #expect(log.all == ["success"])
        #expect(root.openScopeCount == 0)
    }

    @Test func aClientThatDisconnectsMidBodyClosesTheScopeAsCancelled() async throws {
        let (root, log, _) = makeRoot()
        try await Application(router: makeRouter(root: root))
            .test(.live) { client in
                let connection = try await RawHTTPConnection(port: try #require(client.port))
                let received = try await connection.exchange("GET /endless HTTP/1.1\r\nHost: test\r\n\r\n") {
                    $0.contains("line 3\n")
                }
                #expect(received.hasPrefix("HTTP/1.1 200 OK"))
                #expect(await eventually { !log.all.isEmpty })
                #expect(log.all == ["cancelled"])
                #expect(await eventually { root.openScopeCount == 0 })
            }
    }

    @Test func aCommitThatFailsCutsTheResponseShortInsteadOfReportingSuccess() async throws {
        let (root, log, _) = makeRoot()
        try await Application(router: makeRouter(root: root))
            .test(.live) { client in
                let connection = try await RawHTTPConnection(port: try #require(client.port))
                // Read until the server closes the connection.
                let received = try await connection.exchange(
                    "GET /stream HTTP/1.1\r\nHost: test\r\nConnection: close\r\nX-Fail-Commit: 1\r\n\r\n"
                )
                #expect(received.contains("line 1\n"))
                // The last line was held back until the scope closed, and the close failed.
                #expect(!received.contains("line 2"))
                #expect(!received.hasSuffix("0\r\n\r\n"))  // no end of the chunked body
            }
        #expect(log.all == ["success"])  // the outcome it was told; its close then threw
        #expect(root.openScopeCount == 0)
    }

    @Test func aShortBodyOfKnownLengthIsWrittenInTheScopeWhichClosesBeforeTheResponseIsSent() async throws {
        let (root, log, builds) = makeRoot()
        try await Application(router: makeRouter(root: root))
            .test(.live) { client in
                try await client.execute(uri: "/short", method: .get) { response in
                    #expect(response.status == .ok)
                    #expect(String(buffer: response.body) == "id 1")
                    // The scope had closed before the response was sent.
                    #expect(log.all == ["success"])
                }
                // A commit that fails is the request's error, before any byte was sent.
                try await client.execute(uri: "/short", method: .get, headers: [HTTPField.Name("X-Fail-Commit")!: "1"])
                {
                    response in
                    #expect(response.status == .internalServerError)
                }
            }
        #expect(builds.all == [1, 2])
        #expect(log.all == ["success", "success"])
        #expect(root.openScopeCount == 0)
    }

    @Test func aResponseThatIsNeverWrittenStillClosesItsScopeAsCancelled() async throws {
        let (root, log, builds) = makeRoot()
        try await Application(router: makeRouter(root: root))
            .test(.router) { client in
                try await client.execute(uri: "/dropped", method: .get) { response in
                    #expect(response.status == .accepted)
                }
            }
        #expect(await eventually { root.openScopeCount == 0 })
        #expect(builds.all == [1])
        #expect(log.all == ["cancelled"])
    }
}
