import Foundation
import NIOCore
import Scoped
import ScopedTestSupport
import ScopedVapor
import SessionTestSupport
import Testing
import Vapor

/// Request scopes behind Vapor, with a real session on SQLite and on PostgreSQL.
@Suite(.serialized, .loadExclusion)
struct VaporSessionTests {
    /// `POST /items/:name` inserts the name in the request's session and answers with what that
    /// session sees; `?fail=1` fails the request after the insert.
    private func routes(_ backend: SessionBackend) -> (Application) throws -> Void {
        { app in
            app.post("items", ":name") { request async throws -> ScopeEcho in
                let name = try request.parameters.require("name")
                let session = try await backend.session()
                _ = try await session.insert(name)
                if request.query[String.self, at: "fail"] != nil { throw Abort(.conflict, reason: "refused \(name)") }
                return ScopeEcho(
                    requestID: ScopedValues.current.requestID,
                    tag: ScopedValues.current.tag,
                    names: try await session.names()
                )
            }
            // Inserts a marker, then streams lines until the client goes away, each read from
            // the request's session.
            app.get("export", ":name") { request async throws -> Response in
                let name = try request.parameters.require("name")
                _ = try await backend.session().insert(name)
                return Response(
                    status: .ok,
                    body: .init(scopedAsyncStream: { writer in
                        for line in 0... {
                            let count = try await backend.session().names().count
                            try await writer.write(.buffer(ByteBuffer(string: "line \(line) of \(count)\n")))
                            try await Task.sleep(for: .milliseconds(5))
                        }
                    })
                )
            }
        }
    }

    private func committed(_ root: ScopeRoot, _ backend: SessionBackend) async throws -> [String] {
        try await root.withScope { try await backend.session().names() }
    }

    private func leased(_ root: ScopeRoot, _ backend: SessionBackend) async throws -> Int {
        try await root.withScope { try await backend.leased() }
    }

    @Test(arguments: SessionBackend.available)
    func aRequestCommitsBeforeItsResponseAndOneThatThrowsRollsBackWithItsStatus(backend: SessionBackend) async throws {
        try await backend.withRoot { root in
            try await withServingApp(root: root, routes: routes(backend)) { app, port in
                let kept = try await app.client.post("http://127.0.0.1:\(port)/items/kept")
                #expect(kept.status == .ok)
                // The commit happened before the response was sent: a new scope sees it at once.
                #expect(try await committed(root, backend) == ["kept"])

                let refused = try await app.client.post("http://127.0.0.1:\(port)/items/refused?fail=1")
                #expect(refused.status == .conflict)
                #expect(try await committed(root, backend) == ["kept"])
                #expect(try await leased(root, backend) == 0)
            }
            #expect(root.openScopeCount == 0)
        }
    }

    @Test(arguments: SessionBackend.available)
    func aThousandConcurrentRequestsEachSeeOnlyTheirOwnScopeAndTransaction(backend: SessionBackend) async throws {
        let count = 1_000
        // Every tenth request fails after its insert: no other request may ever see that row.
        let fails: @Sendable (Int) -> Bool = { index in index % 10 == 3 }
        try await backend.withRoot(statementTimeout: .seconds(30), leaseTimeout: .seconds(30)) { root in
            try await withServingApp(root: root, routes: routes(backend)) { app, port in
                let answers = try await withThrowingTaskGroup(of: (Int, ClientResponse).self) { group in
                    for index in 0..<count {
                        group.addTask {
                            let query = fails(index) ? "?fail=1" : ""
                            let response = try await app.client.post(
                                "http://127.0.0.1:\(port)/items/n-\(index)\(query)",
                                headers: ["X-Request-Id": "r-\(index)", "X-Tag": "tag-\(index)"]
                            )
                            return (index, response)
                        }
                    }
                    return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
                }
                #expect(answers.count == count)
                let failedNames = Set((0..<count).filter(fails).map { "n-\($0)" })
                for (index, response) in answers.sorted(by: { $0.key < $1.key }) {
                    let body = response.body.map { String(buffer: $0) } ?? ""
                    if fails(index) {
                        #expect(response.status == .conflict, "request \(index): \(body)")
                        continue
                    }
                    #expect(response.status == .ok, "request \(index): \(body)")
                    let echo = try response.content.decode(ScopeEcho.self)
                    #expect(echo.requestID == "r-\(index)")
                    #expect(echo.tag == "tag-\(index)")
                    #expect(echo.names?.contains("n-\(index)") == true)
                    #expect(failedNames.isDisjoint(with: echo.names ?? []), "request \(index) saw a rolled-back row")
                }
                let expected = (0..<count).filter { !fails($0) }.map { "n-\($0)" }.sorted()
                #expect(try await committed(root, backend) == expected)
                #expect(try await leased(root, backend) == 0)
            }
            #expect(root.openScopeCount == 0)
        }
    }

    @Test(arguments: SessionBackend.available)
    func aClientThatDisconnectsMidBodyRollsBackAndLeavesNothingOpen(backend: SessionBackend) async throws {
        try await backend.withRoot { root in
            try await withServingApp(root: root, routes: routes(backend)) { _, port in
                let connection = try await RawHTTPConnection(port: port)
                let received = try await connection.exchange("GET /export/abandoned HTTP/1.1\r\nHost: test\r\n\r\n") {
                    $0.contains("line 3 of 1\n")
                }
                #expect(received.hasPrefix("HTTP/1.1 200 OK"))
                // The connection is closed: the stream's next write fails, the scope closes as
                // cancelled, and the session rolls back its insert and returns its connection.
                #expect(await eventually { root.openScopeCount == 0 })
                #expect(try await committed(root, backend) == [])
                #expect(try await leased(root, backend) == 0)
            }
        }
    }
}
