import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2
import Scoped
import ScopedGRPC
import ScopedTenants
import ScopedTestSupport
import SessionTestSupport
import Testing

/// RPC scopes over grpc-swift's HTTP/2 transport on loopback, with a real session on SQLite
/// and on PostgreSQL.
@Suite(.serialized)
struct RPCScopeInterceptorTests {
    private typealias Client = GRPCClient<HTTP2ClientTransport.Posix>

    /// Serves `ItemsService` on a free loopback port, every RPC in a scope of `root`, and runs
    /// `body` with a client connected to it.
    private func withServer<R: Sendable>(
        root: ScopeRoot,
        backend: SessionBackend,
        _ body: @Sendable (Client) async throws -> R
    ) async throws -> R {
        // SNIPPET-BEGIN
        let server = GRPCServer(
            transport: .http2NIOPosix(address: .ipv4(host: "127.0.0.1", port: 0), transportSecurity: .plaintext),
            services: [ItemsService(backend: backend, root: root)],
            interceptors: [
                RPCScopeInterceptor(root: root) { values, _, metadata in
                    for case .string(let tag) in metadata["x-tag"] { values.tag = tag }
                }
            ]
        )
        // SNIPPET-END
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await server.serve() }
            defer { server.beginGracefulShutdown() }
            let port = try #require(try await server.transport.listeningAddress.ipv4?.port)
            return try await withGRPCClient(
                transport: .http2NIOPosix(
                    target: .ipv4(address: "127.0.0.1", port: port),
                    transportSecurity: .plaintext
                )
            ) { client in
                try await body(client)
            }
        }
    }

    @Test func anRPCRunsAsTheTenantItsResolverNamesAndAnInvalidOneIsRefused() async throws {
        let backend = SessionBackend.available[0]
        try await backend.withRoot { root in
            let server = GRPCServer(
                transport: .http2NIOPosix(address: .ipv4(host: "127.0.0.1", port: 0), transportSecurity: .plaintext),
                services: [ItemsService(backend: backend, root: root)],
                interceptors: [
                    RPCScopeInterceptor(
                        root: root,
                        tenant: { _, metadata in
                            for case .string(let raw) in metadata["x-tenant"] {
                                guard let tenant = TenantID(raw) else {
                                    throw RPCError(code: .invalidArgument, message: "invalid_tenant")
                                }
                                return tenant
                            }
                            return nil
                        }
                    ) { values, _, _ in
                        // The scope's tenant, fixed before `update` runs.
                        values.tag = values.tenant?.rawValue ?? "none"
                    }
                ]
            )
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await server.serve() }
                defer { server.beginGracefulShutdown() }
                let port = try #require(try await server.transport.listeningAddress.ipv4?.port)
                try await withGRPCClient(
                    transport: .http2NIOPosix(
                        target: .ipv4(address: "127.0.0.1", port: port),
                        transportSecurity: .plaintext
                    )
                ) { client async throws in
                    #expect(try await add("a", on: client, metadata: ["x-tenant": "acme"]).tag == "acme")
                    #expect(try await add("b", on: client, metadata: ["x-tenant": "beta"]).tag == "beta")
                    #expect(try await add("c", on: client).tag == "none")
                    let error = await #expect(throws: RPCError.self) {
                        try await add("d", on: client, metadata: ["x-tenant": "Not Valid"])
                    }
                    #expect(error?.code == .invalidArgument)
                }
            }
            #expect(root.tenantStatistics.open == 2)
            #expect(root.openScopeCount == 0)
        }
    }

    @Test func theArticleShowsThisFilesSnippet() throws {
        let article = try ArticleSnippets.inArticle("Sources/ScopedGRPC/ScopedGRPC.docc/ScopedGRPC.md")
        // The root's life, shown last, is run by the conformance suite.
        let lifecycle = ArticleSnippets.repositoryRoot(from: #filePath)
            .appending(path: "Tests/ScopedConformanceTests/GRPCArticleTests.swift").path
        #expect(article == (try ArticleSnippets.marked() + ArticleSnippets.marked(in: lifecycle)))
    }

    private func add(_ name: String, on client: Client, metadata: Metadata = [:]) async throws -> ItemEcho {
        try await client.unary(
            request: ClientRequest(message: Item(name: name), metadata: metadata),
            descriptor: ItemsService.add,
            serializer: JSONCodec<Item>(),
            deserializer: JSONCodec<ItemEcho>(),
            options: .defaults
        ) { try $0.message }
    }

    private func committed(_ root: ScopeRoot, _ backend: SessionBackend) async throws -> [String] {
        try await root.withScope { try await backend.session().names() }
    }

    private func leased(_ root: ScopeRoot, _ backend: SessionBackend) async throws -> Int {
        try await root.withScope { try await backend.leased() }
    }

    @Test(arguments: SessionBackend.available)
    func anRPCCommitsBeforeItsStatusAndOneThatFailsRollsBackWithItsCode(backend: SessionBackend) async throws {
        try await backend.withRoot { root in
            try await withServer(root: root, backend: backend) { client in
                let echo = try await add("kept", on: client, metadata: ["x-request-id": "rpc-1", "x-tag": "blue"])
                #expect(echo.requestID == "rpc-1")
                #expect(echo.tag == "blue")
                #expect(echo.names == ["kept"])
                // The status came after the commit: a new scope sees the row at once.
                #expect(try await committed(root, backend) == ["kept"])

                let error = await #expect(throws: RPCError.self) { try await add("failing", on: client) }
                #expect(error?.code == .alreadyExists)
                #expect(try await committed(root, backend) == ["kept"])

                // Without a valid ID from the client, the RPC gets a new one.
                let unnamed = try await add("unnamed", on: client, metadata: ["x-request-id": "not valid"])
                #expect(unnamed.requestID?.wholeMatch(of: /[0-9a-f]{32}/) != nil, "\(unnamed)")
            }
            #expect(root.openScopeCount == 0)
            #expect(try await leased(root, backend) == 0)
        }
    }

    @Test(arguments: SessionBackend.available)
    func concurrentRPCsEachSeeOnlyTheirOwnScope(backend: SessionBackend) async throws {
        let count = 200
        try await backend.withRoot(statementTimeout: .seconds(30), leaseTimeout: .seconds(30)) { root in
            try await withServer(root: root, backend: backend) { client in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for index in 0..<count {
                        group.addTask {
                            let echo = try await add(
                                "n-\(index)",
                                on: client,
                                metadata: ["x-request-id": "r-\(index)", "x-tag": "t-\(index)"]
                            )
                            #expect(echo.requestID == "r-\(index)")
                            #expect(echo.tag == "t-\(index)")
                            #expect(echo.names.contains("n-\(index)"))
                        }
                    }
                    try await group.waitForAll()
                }
            }
            #expect(try await committed(root, backend).count == count)
            #expect(root.openScopeCount == 0)
        }
    }

    @Test(arguments: SessionBackend.available)
    func anRPCWhoseDeadlinePassesRollsBackAndLeavesNothingOpen(backend: SessionBackend) async throws {
        try await backend.withRoot { root in
            try await withServer(root: root, backend: backend) { client in
                var options = CallOptions.defaults
                options.timeout = .milliseconds(300)
                let error = await #expect(throws: RPCError.self) {
                    try await client.unary(
                        request: ClientRequest(message: Item(name: "late")),
                        descriptor: ItemsService.addSlowly,
                        serializer: JSONCodec<Item>(),
                        deserializer: JSONCodec<ItemEcho>(),
                        options: options
                    ) { try $0.message }
                }
                #expect(error?.code == .deadlineExceeded)
                #expect(await eventually(within: .seconds(10)) { root.openScopeCount == 0 })
            }
            #expect(try await committed(root, backend) == [])
            #expect(try await leased(root, backend) == 0)
        }
    }

    @Test(arguments: SessionBackend.available)
    func aClientThatCancelsAStreamRollsBackAndLeavesNothingOpen(backend: SessionBackend) async throws {
        try await backend.withRoot { root in
            try await withServer(root: root, backend: backend) { client in
                let received = try await client.serverStreaming(
                    request: ClientRequest(message: Item(name: "watched")),
                    descriptor: ItemsService.watch,
                    serializer: JSONCodec<Item>(),
                    deserializer: JSONCodec<ItemEcho>(),
                    options: .defaults
                ) { response in
                    var seen: [ItemEcho] = []
                    for try await message in response.messages {
                        seen.append(message)
                        if seen.count == 3 { break }  // the client stops the call
                    }
                    return seen
                }
                #expect(received.count == 3)
                #expect(received.allSatisfy { $0.names == ["watched"] })
                #expect(await eventually(within: .seconds(10)) { root.openScopeCount == 0 })
            }
            #expect(try await committed(root, backend) == [])
            #expect(try await leased(root, backend) == 0)
        }
    }

    @Test(arguments: SessionBackend.available)
    func eachStreamedMessageCommitsInItsOwnScopeBeforeItsReply(backend: SessionBackend) async throws {
        try await backend.withRoot { root in
            try await withServer(root: root, backend: backend) { client in
                let replies = try await client.bidirectionalStreaming(
                    request: StreamingClientRequest(of: Item.self, metadata: ["x-request-id": "stream-1"]) { writer in
                        for name in ["one", "bad-two", "three"] { try await writer.write(Item(name: name)) }
                    },
                    descriptor: ItemsService.addEach,
                    serializer: JSONCodec<Item>(),
                    deserializer: JSONCodec<ItemEcho>(),
                    options: .defaults
                ) { response in
                    try await response.messages.reduce(into: []) { $0.append($1) }
                }
                #expect(replies.map(\.names) == [["one"], [], ["three"]])
                // Each good message had committed when its reply was written.
                #expect(replies.map(\.committed) == [true, false, true])
                // Every message's scope is a child of the call's, which holds the call's ID.
                #expect(replies[0].requestID == "stream-1")
            }
            #expect(try await committed(root, backend) == ["one", "three"])
            #expect(root.openScopeCount == 0)
        }
    }
}
