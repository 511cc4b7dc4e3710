import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Scoped
@testable import ScopedHummingbird
import ScopedTestSupport
import Synchronization
import Testing

extension ScopedValues {
    @Entry var greeting: String = "default"
}

/// Records how the request's resource was closed.
final class CloseLog: Sendable {
    private let outcomes = Mutex<[String]>([])
    func record(_ outcome: ScopeOutcome) {
        outcomes.withLock {
            $0.append(outcome.isSuccess ? "success" : "\(outcome)".hasPrefix("cancelled") ? "cancelled" : "failure")
        }
    }
    var all: [String] { outcomes.withLock { $0 } }
}

extension ScopedValues {
    @Entry var closeLog: CloseLog? = nil
}

enum RequestResourceKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.scope
    static func makeValue() async throws -> CloseLog { ScopedValues.current.closeLog! }
    static func close(_ log: CloseLog, outcome: ScopeOutcome) async throws { log.record(outcome) }
}

/// Records the status of every error that passes through it, as a metrics or tracing
/// middleware installed before the request scope would see it.
struct RecordingMiddleware<Context: RequestContext>: RouterMiddleware {
    let recorder: Recorder<Int>

    @concurrent
    func handle(_ request: Request, context: Context, next: @concurrent (Request, Context) async throws -> Response)
        async throws -> Response
    {
        do {
            return try await next(request, context)
        } catch let error as any HTTPResponseError {
            recorder.record(error.status.code)
            throw error
        } catch {
            recorder.record(500)
            throw error
        }
    }
}

/// An object a request reads by its type.
struct Shelf: Sendable {
    let name: String
}

struct RequestScopeMiddlewareTests {
    private func makeRouter(root: ScopeRoot, recorder: Recorder<Int> = Recorder()) -> Router<BasicRequestContext> {
        let router = Router()
        router.add(middleware: RequestIDMiddleware())
        router.add(middleware: RecordingMiddleware(recorder: recorder))
        router.add(
            middleware: RequestScopeMiddleware(root: root) { values, request, _ in
                if request.headers[HTTPField.Name("X-Refuse")!] != nil {
                    throw HTTPError(.forbidden, message: "refused")
                }
                if let greeting = request.headers[HTTPField.Name("X-Greeting")!] { values.greeting = greeting }
            }
        )
        router.get("/echo") { _, context in
            let values = ScopedValues.current
            _ = try await values.service(RequestResourceKey.self)
            context.logger.info("from the context's logger")
            Logger.current.info("from Logger.current")
            return "\(values.greeting) \(values.requestID ?? "none")"
        }
        router.get("/shelf") { _, _ -> String in
            // A read of an object that must be there: one no scope set fails this request only.
            try ScopedValues.current.require(Shelf.self).name
        }
        router.get("/fail") { _, _ -> String in
            _ = try await ScopedValues.current.service(RequestResourceKey.self)
            throw HTTPError(.conflict, message: "no")
        }
        return router
    }

    @Test func aValidIncomingRequestIDIsTheScopesAndTheResponses() async throws {
        let log = CloseLog()
        let root = ScopeRoot {
            $0.greeting = "hello from root"
            $0.closeLog = log
        }
        try await Application(router: makeRouter(root: root))
            .test(.router) { client in
                try await client.execute(uri: "/echo", method: .get, headers: [.requestID: "r-1"]) { response in
                    #expect(String(buffer: response.body) == "hello from root r-1")
                    #expect(response.headers[.requestID] == "r-1")
                }
            }
        #expect(log.all == ["success"])
        #expect(root.openScopeCount == 0)
    }

    @Test(arguments: [nil, "has space", String(repeating: "x", count: 65)])
    func withoutAValidIncomingIDTheRequestKeepsHummingbirdsID(incoming: String?) async throws {
        let root = ScopeRoot { $0.closeLog = CloseLog() }
        let ids = try await Application(router: makeRouter(root: root))
            .test(.router) { client in
                var ids: [String] = []
                for _ in 0..<2 {
                    let headers: HTTPFields =
                        incoming.map { [.requestID: $0, HTTPField.Name("X-Greeting")!: "hi"] } ?? [
                            HTTPField.Name("X-Greeting")!: "hi"
                        ]
                    let id = try await client.execute(uri: "/echo", method: .get, headers: headers) { response in
                        let id = try #require(response.headers[.requestID])
                        #expect(id != incoming)
                        #expect(RequestIDs.accepting(id) == id)
                        #expect(String(buffer: response.body) == "hi \(id)")
                        return id
                    }
                    ids.append(id)
                }
                return ids
            }
        #expect(Set(ids).count == 2)
    }

    @Test func everyLogLineOfARequestCarriesOneRequestIDTheOneTheClientSees() async throws {
        let capture = LogCapture()
        let root = ScopeRoot { $0.closeLog = CloseLog() }
        let application = Application(router: makeRouter(root: root), logger: capture.logger(label: "server"))
        let seen = try await application.test(.router) { client in
            var seen: [String] = []
            for incoming in ["client-id-1", nil] {
                let headers: HTTPFields = incoming.map { [.requestID: $0] } ?? [:]
                let id = try await client.execute(uri: "/echo", method: .get, headers: headers) { response in
                    try #require(response.headers[.requestID])
                }
                seen.append(id)
            }
            return seen
        }
        #expect(seen.first == "client-id-1")
        let lines = capture.lines.filter { $0.message.hasPrefix("from ") }
        #expect(lines.count == 4)
        for (index, line) in lines.enumerated() {
            #expect(line.metadata["hb.request.id"]?.description == seen[index / 2], "\(line)")
            #expect(line.metadata.keys.filter { $0.contains("request") }.count == 1, "\(line)")
        }
    }

    @Test func failedRequestClosesItsScopeAsAFailureAndStillCarriesTheRequestID() async throws {
        let log = CloseLog()
        let recorder = Recorder<Int>()
        let root = ScopeRoot { $0.closeLog = log }
        try await Application(router: makeRouter(root: root, recorder: recorder))
            .test(.router) { client in
                try await client.execute(uri: "/fail", method: .get, headers: [.requestID: "failing"]) { response in
                    #expect(response.status == .conflict)
                    #expect(response.headers[.requestID] == "failing")
                }
            }
        #expect(log.all == ["failure"])
        #expect(recorder.all == [409])
    }

    /// A missing object fails the request that read it (a 500, logged with the error's type and
    /// the object's), never the process: requests beside it, and after it, are served.
    @Test func aMissingObjectFailsItsRequestAloneOnALiveServer() async throws {
        let capture = LogCapture()
        let log = CloseLog()
        let root = ScopeRoot { $0.closeLog = log }
        let application = Application(
            router: makeRouter(root: root),
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            logger: capture.logger(label: "server")
        )
        let statuses = try await application.test(.live) { client in
            try await withThrowingTaskGroup(of: (String, Int).self) { group in
                for index in 0..<16 {
                    let uri = index.isMultiple(of: 2) ? "/shelf" : "/echo"
                    group.addTask { (uri, try await client.execute(uri: uri, method: .get) { Int($0.status.code) }) }
                }
                return try await group.reduce(into: [String: [Int]]()) { $0[$1.0, default: []].append($1.1) }
            }
        }
        #expect(statuses["/shelf"] == Array(repeating: 500, count: 8))
        #expect(statuses["/echo"] == Array(repeating: 200, count: 8))
        let failures = capture.lines.filter { $0.level == .error }
        #expect(failures.count == 8)
        for line in failures {
            #expect(line.metadata["error.type"]?.description == String(reflecting: ScopedError.self), "\(line)")
            #expect(line.message.contains(String(reflecting: Shelf.self)), "\(line)")
        }
        #expect(log.all.count == 8)
        #expect(root.openScopeCount == 0)
    }

    @Test func anUpdateThatRefusesTheRequestPassesItsErrorOutWithItsStatus() async throws {
        let recorder = Recorder<Int>()
        let root = ScopeRoot { $0.closeLog = CloseLog() }
        try await Application(router: makeRouter(root: root, recorder: recorder))
            .test(.router) { client in
                try await client.execute(uri: "/echo", method: .get, headers: [HTTPField.Name("X-Refuse")!: "1"]) {
                    response in
                    #expect(response.status == .forbidden)
                    #expect(response.headers[.requestID] != nil)
                }
            }
        #expect(recorder.all == [403])
        #expect(root.openScopeCount == 0)
    }
}
