import Scoped
import ScopedTestSupport
import SessionTestSupport
import Testing

/// What the README promises of every adapter, asserted the same way on each stack and each
/// database: the conformance app served through the adapter as its article sets it up, a real
/// server on loopback, a real session.
///
/// One suite at a time among those that flood the process: each case runs a server and a
/// database of its own, and 300 ms closes.
@Suite(.loadExclusion)
struct RequestGuaranteeTests {
    /// Runs `body` with `stack` serving the conformance app on a new `backend` database.
    private func serving(
        _ stack: Stack,
        on backend: SessionBackend,
        _ body: @escaping @Sendable (any ConformanceClient, ScopeRoot, CloseLog) async throws -> Void
    ) async throws {
        try await serving(
            on: backend,
            by: { root, app, log, body in try await stack.serve(root: root, app: app, log: log, body) },
            body
        )
    }

    /// Runs `body` with `stack` serving the conformance app's inserts on a new `backend` database.
    private func serving(
        _ stack: InsertingStack,
        on backend: SessionBackend,
        _ body: @escaping @Sendable (any InsertingClient, ScopeRoot, CloseLog) async throws -> Void
    ) async throws {
        try await serving(
            on: backend,
            by: { root, app, log, body in try await stack.serve(root: root, app: app, log: log, body) },
            body
        )
    }

    private func serving<Client>(
        on backend: SessionBackend,
        by serve: (Roots, ConformanceApp, CloseLog, @Sendable (Client) async throws -> Void) async throws -> Void,
        _ body: @escaping @Sendable (Client, ScopeRoot, CloseLog) async throws -> Void
    ) async throws {
        let log = CloseLog()
        try await backend.withRoot { root in
            try await serve(.fixed(root), ConformanceApp(backend: backend), log) { client in
                try await body(client, root, log)
            }
            #expect(await eventually(within: .seconds(10)) { root.openScopeCount == 0 })
            #expect(try await root.withScope { try await backend.leased() } == 0)
        }
    }

    private func committed(_ root: ScopeRoot, _ backend: SessionBackend) async throws -> [String] {
        try await root.withScope { try await backend.session().names() }
    }

    @Test(arguments: InsertingStack.allCases, SessionBackend.available)
    func aSuccessCommitsBeforeItsResponseAndAThrownErrorRollsBack(
        stack: InsertingStack,
        backend: SessionBackend
    ) async throws {
        try await serving(stack, on: backend) { client, root, log in
            let kept = try await client.insert("kept")
            guard case .answered(let answer) = kept else {
                Issue.record("\(kept)")
                return
            }
            #expect(answer.names == ["kept"])
            // The scope had closed, and the session committed, when the response arrived.
            #expect(log.all == ["success"])
            #expect(try await committed(root, backend) == ["kept"])

            #expect(try await client.insert("refused", mode: .failing, requestID: nil) == .refused)
            #expect(await eventually { log.all.count == 2 })
            #expect(log.all == ["success", "failure"])
            #expect(await eventually { root.openScopeCount == 0 })
            #expect(try await committed(root, backend) == ["kept"])
        }
    }

    /// 17 chunks of 64 KiB: past every limit below which a body is written into memory first.
    ///
    /// Of known length, a response is whole at its last data byte, which the adapter holds back
    /// until the commit; sent in chunks, at its last (empty) chunk. gRPC has no body length:
    /// its response is whole at the RPC's status.
    @Test(arguments: Stack.allCases, SessionBackend.available)
    func aStreamedBodyOverAMebibyteIsReadFromTheRequestsTransactionAndEndsAfterItsCommit(
        stack: Stack,
        backend: SessionBackend
    ) async throws {
        for lengthKnown in [true, false] { try await export(on: stack, backend, lengthKnown: lengthKnown) }
    }

    private func export(on stack: Stack, _ backend: SessionBackend, lengthKnown: Bool) async throws {
        let chunks = 17
        try await serving(stack, on: backend) { client, root, log in
            let export = try await client.export("exported", chunks: chunks, lengthKnown: lengthKnown)
            #expect(export.isComplete)
            #expect(export.body.count == chunks * ConformanceApp.chunkSize)
            // Every chunk saw the row its request inserted and had not committed yet.
            #expect(export.body.allSatisfy { $0 == UInt8(ascii: "1") })
            // The last byte came after the scope's close and the commit.
            #expect(log.all == ["success"])
            #expect(try await committed(root, backend) == ["exported"])
        }
    }

    @Test(arguments: Stack.allCases, SessionBackend.available)
    func aClientThatGoesAwayMidResponseClosesTheScopeAsCancelledAndRollsBack(
        stack: Stack,
        backend: SessionBackend
    ) async throws {
        try await serving(stack, on: backend) { client, root, log in
            let lines = try await client.leaveMidStream("left")
            #expect(lines.count >= 4)
            // Each line was read from the request's session, which sees its own insert.
            #expect(lines.allSatisfy { $0.hasSuffix(" of 1\n") })
            #expect(await eventually(within: .seconds(10)) { root.openScopeCount == 0 })
            #expect(log.all == ["cancelled"])
            #expect(try await committed(root, backend) == [])
        }
    }

    @Test(arguments: InsertingStack.allCases, SessionBackend.available)
    func aValidClientRequestIDIsKeptAndAForgedOneReplaced(stack: InsertingStack, backend: SessionBackend) async throws {
        try await serving(stack, on: backend) { client, _, _ in
            let valid = "abc.1-_XYZ"
            let kept = try await client.insert("valid", requestID: valid)
            #expect(kept == .answered(Answer(requestID: valid, names: ["valid"], root: "-")))

            let forgeries = ["forged id", "forged\"quote", String(repeating: "a", count: 65)]
            var seen: Set<String> = [valid]
            for (index, forged) in forgeries.enumerated() {
                let answer = try await client.insert("forged\(index)", requestID: forged)
                guard case .answered(let answered) = answer else {
                    Issue.record("\(answer)")
                    continue
                }
                #expect(answered.requestID != forged)
                #expect(RequestIDs.accepting(answered.requestID) == answered.requestID, "\(answered.requestID)")
                seen.insert(answered.requestID)
            }
            let none = try await client.insert("none")
            guard case .answered(let answered) = none else {
                Issue.record("\(none)")
                return
            }
            #expect(RequestIDs.accepting(answered.requestID) == answered.requestID)
            seen.insert(answered.requestID)
            // Every request got an ID of its own.
            #expect(seen.count == forgeries.count + 2)
        }
    }

    /// A message is not a response: the client that sent it going away is seen by the
    /// connection's reader, not by the message, which runs to its end and commits; its reply
    /// has nowhere to go, and the connection's scope closes.
    @Test(arguments: SessionBackend.available)
    func aWebSocketMessageInFlightWhenItsClientGoesAwayFinishesAndCommits(backend: SessionBackend) async throws {
        let app = ConformanceApp(backend: backend)
        let log = CloseLog()
        try await backend.withRoot { root in
            try await InsertingStack.webSocketMessages.serve(root: .fixed(root), app: app, log: log) { client in
                let webSocket = try #require(client as? WebSocketConformanceClient)
                try await webSocket.insertAndLeave("left") { await app.inFlight.wait() }
                #expect(await eventually(within: .seconds(10)) { root.openScopeCount == 0 })
                #expect(log.all == ["success"])
                #expect(try await committed(root, backend) == ["left"])
            }
        }
    }
}
