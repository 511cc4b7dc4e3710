import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Scoped
import ScopedHummingbird
import Synchronization
import Testing

extension ScopedValues {
    @Entry var greeting: String = "default"
}

/// Records how the request's resource was closed.
final class CloseLog: Sendable {
    private let outcomes = Mutex<[String]>([])
    func record(_ outcome: ScopeOutcome) {
        outcomes.withLock { $0.append(outcome.isSuccess ? "success" : "\(outcome)".hasPrefix("cancelled") ? "cancelled" : "failure") }
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

struct RequestScopeMiddlewareTests {
    private func makeRouter(root: ScopeRoot) -> Router<BasicRequestContext> {
        let router = Router()
        router.add(middleware: RequestScopeMiddleware(root: root) { values, request, _ in
            if let greeting = request.headers[HTTPField.Name("X-Greeting")!] { values.greeting = greeting }
        })
        router.get("/echo") { _, _ in
            let values = ScopedValues.current
            _ = try await values[RequestResourceKey.self]
            return "\(values.greeting) \(values.requestID ?? "none")"
        }
        router.get("/fail") { _, _ -> String in
            _ = try await ScopedValues.current[RequestResourceKey.self]
            throw HTTPError(.conflict, message: "no")
        }
        return router
    }

    @Test func requestsRunInAScopeOfTheRootWithTheirIDAndUpdates() async throws {
        let log = CloseLog()
        let root = ScopeRoot { $0.greeting = "hello from root"; $0.closeLog = log }
        try await Application(router: makeRouter(root: root)).test(.router) { client in
            try await client.execute(uri: "/echo", method: .get, headers: [.requestID: "r-1"]) { (response: TestResponse) async throws in
                #expect(String(buffer: response.body) == "hello from root r-1")
                #expect(response.headers[.requestID] == "r-1")
            }
            try await client.execute(uri: "/echo", method: .get, headers: [HTTPField.Name("X-Greeting")!: "hi"]) { (response: TestResponse) async throws in
                let id = try #require(response.headers[.requestID])
                #expect(RequestID.isValid(id))
                #expect(String(buffer: response.body) == "hi \(id)")
            }
        }
        #expect(log.all == ["success", "success"])
        #expect(root.openScopeCount == 0)
    }

    @Test func failedRequestClosesItsScopeAsAFailureAndStillCarriesTheRequestID() async throws {
        let log = CloseLog()
        let root = ScopeRoot { $0.closeLog = log }
        try await Application(router: makeRouter(root: root)).test(.router) { client in
            try await client.execute(uri: "/fail", method: .get, headers: [.requestID: "failing"]) { (response: TestResponse) async throws in
                #expect(response.status == .conflict)
                #expect(response.headers[.requestID] == "failing")
            }
        }
        #expect(log.all == ["failure"])
    }

    @Test(arguments: [("abc", true), ("a.b_c-D9", true), ("", false), ("has space", false), ("ü", false), (String(repeating: "x", count: 65), false)])
    func requestIDValidity(id: String, valid: Bool) {
        #expect(RequestID.isValid(id) == valid)
        #expect((RequestID.accepting(id) == id) == valid)
    }

    @Test func metadataProviderAddsTheRequestIDOnlyInsideARequest() {
        #expect(Logger.MetadataProvider.scopedRequestID.get().isEmpty)
        withScopedValues({ $0.requestID = "req-7" }) {
            #expect(Logger.MetadataProvider.scopedRequestID.get()["request_id"] == .string("req-7"))
        }
    }

    @Test func generatedRequestIDsAreValidAndDistinct() {
        let ids = (0..<1_000).map { _ in RequestID.make() }
        #expect(ids.allSatisfy { RequestID.isValid($0) && $0.count == 32 })
        #expect(Set(ids).count == ids.count)
    }
}
