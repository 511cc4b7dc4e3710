import Foundation
import Hummingbird
import HummingbirdTesting
import HummingbirdWSClient
import HummingbirdWebSocket
import Logging
import Scoped
import ScopedTestSupport
import SessionTestSupport
import ScopedHummingbird
import ScopedHummingbirdWebSocket
import Testing

/// A stack that takes the conformance app's inserts: every request stack, and WebSocket
/// messages, each in a scope of its own as ScopedHummingbirdWebSocket's article sets them up.
///
/// WebSocket messages take part in what applies to a unit of work that answers (commit before
/// the reply, rollback of a message that throws, the request-ID rule on the upgrade request, a
/// reload); a reply is one text message, so the streamed bodies' properties do not apply.
enum InsertingStack: CaseIterable, CustomTestStringConvertible, Sendable {
    case request(Stack)
    case webSocketMessages

    static var allCases: [InsertingStack] { Stack.allCases.map(Self.request) + [.webSocketMessages] }

    var testDescription: String {
        switch self {
        case .request(let stack): stack.testDescription
        case .webSocketMessages: "webSocketMessages"
        }
    }

    /// Serves `app` with every request or message in a scope of `root` whose ``CommitProbeKey``
    /// records in `log`, and runs `body` with a client of the server.
    func serve(
        root: Roots,
        app: ConformanceApp,
        log: CloseLog,
        _ body: @Sendable (any InsertingClient) async throws -> Void
    ) async throws {
        switch self {
        case .request(let stack):
            try await stack.serve(root: root, app: app, log: log) { try await body($0) }
        case .webSocketMessages:
            let webSocketRouter = Router(context: BasicWebSocketRequestContext.self)
            webSocketRouter.add(middleware: RequestIDMiddleware())
            root.webSocketRoute(on: webSocketRouter, log: log) { inbound, outbound, _ in
                try await inbound.forEachMessage(maxSize: 1 << 16) { message in
                    let (mode, name) = try WebSocketConformanceClient.parse(message)
                    return try await app.insert(name, mode: mode)
                } then: { result in
                    let reply = (try? result.get()).flatMap { try? JSONEncoder().encode($0) }
                    try await outbound.write(.text(reply.map { String(decoding: $0, as: UTF8.self) } ?? "refused"))
                }
            }
            let application = Application(
                router: Router(context: BasicWebSocketRequestContext.self),
                server: .http1WebSocketUpgrade(webSocketRouter: webSocketRouter)
            )
            try await application.test(.live) { client in
                try await body(WebSocketConformanceClient(port: try #require(client.port)))
            }
        }
    }
}

extension Roots {
    /// Adds the route at `/items` whose connections open their scopes on this root (the
    /// current one when it connects, for a reloading root), with `log` set.
    func webSocketRoute(
        on router: Router<BasicWebSocketRequestContext>,
        log: CloseLog,
        _ handler: @escaping WebSocketDataHandler<WebSocketRouterContext<BasicWebSocketRequestContext>>
    ) {
        let update: @Sendable (inout ScopedValues, Request, BasicWebSocketRequestContext) throws -> Void = {
            values,
            _,
            _ in values.conformanceLog = log
        }
        switch self {
        case .fixed(let root): router.ws("/items", root: root, update: update, onUpgrade: handler)
        case .reloading(let root): router.ws("/items", root: root, update: update, onUpgrade: handler)
        }
    }
}

/// A client that sends each insert as a text message on a connection of its own, its upgrade
/// request carrying the request ID: a connection's messages share its ID.
struct WebSocketConformanceClient: InsertingClient {
    let port: Int

    /// Returns the moment the reply arrives, as the HTTP clients return the moment a response
    /// is whole; the connection then closes on its own.
    func insert(_ name: String, mode: InsertMode, requestID: String?) async throws -> InsertResponse {
        var configuration = WebSocketClientConfiguration()
        if let requestID { configuration.additionalHeaders = [.requestID: requestID] }
        let (replies, reply) = AsyncStream<String>.makeStream()
        let url = "ws://127.0.0.1:\(port)/items"
        let connection = Task {
            defer { reply.finish() }
            try await WebSocketClient.connect(
                url: url,
                configuration: configuration,
                logger: Logger(label: "conformance.ws") { _ in SwiftLogNoOpLogHandler() }
            ) { inbound, outbound, _ in
                try await outbound.write(.text("\(mode.rawValue) \(name)"))
                var messages = inbound.messages(maxSize: 1 << 16).makeAsyncIterator()
                if case .text(let text) = try await messages.next() { reply.yield(text) }
            }
        }
        var iterator = replies.makeAsyncIterator()
        guard let text = await iterator.next() else {
            // No reply: the connection's error says why.
            try await connection.value
            throw Refused(name: "no reply to \(name)")
        }
        guard text != "refused" else { return .refused }
        return .answered(try JSONDecoder().decode(Answer.self, from: Data(text.utf8)))
    }

    /// Sends an insert of `name` asked to pause, and closes the connection once `inFlight`
    /// returns, without waiting for the reply.
    func insertAndLeave(_ name: String, once inFlight: @escaping @Sendable () async -> Void) async throws {
        try await WebSocketClient.connect(
            url: "ws://127.0.0.1:\(port)/items",
            logger: Logger(label: "conformance.ws") { _ in SwiftLogNoOpLogHandler() }
        ) { _, outbound, _ in
            try await outbound.write(.text("\(InsertMode.pausing.rawValue) \(name)"))
            await inFlight()
        }
    }

    /// The mode and name a message asks to insert: `"<mode> <name>"`.
    static func parse(_ message: WebSocketMessage) throws -> (InsertMode, String) {
        guard case .text(let text) = message, let space = text.firstIndex(of: " "),
            let mode = InsertMode(rawValue: String(text[..<space]))
        else { throw Refused(name: "\(message)") }
        return (mode, String(text[text.index(after: space)...]))
    }
}
