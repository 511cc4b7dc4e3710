import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2
import Scoped
import ScopedGRPC
import SessionTestSupport

/// A message as JSON: the tests' codec, so that no protobuf code is generated in the build.
struct JSONCodec<Message: Codable & Sendable>: MessageSerializer, MessageDeserializer {
    func serialize<Bytes: GRPCContiguousBytes>(_ message: Message) throws -> Bytes {
        Bytes(try JSONEncoder().encode(message))
    }

    func deserialize<Bytes: GRPCContiguousBytes>(_ serializedMessageBytes: Bytes) throws -> Message {
        try JSONDecoder().decode(Message.self, from: serializedMessageBytes.withUnsafeBytes { Data($0) })
    }
}

struct Item: Codable, Sendable {
    var name: String
}

/// What the service answers: what the RPC's (or the message's) scope and session saw.
struct ItemEcho: Codable, Sendable {
    var requestID: String?
    var tag: String?
    var names: [String]
    /// For a streamed message's reply: whether the message's row was committed when its reply
    /// was written.
    var committed: Bool?
}

extension ScopedValues {
    /// What a test RPC's `x-tag` metadata set in its scope.
    @Entry var tag: String? = nil
}

/// A service over the current scope's session.
///
/// - `Add` (unary) inserts the item and answers with what the session sees; a name starting
///   with `fail` fails the RPC after the insert.
/// - `AddSlowly` (unary) inserts the item and then takes five seconds.
/// - `Watch` (server streaming) inserts the item and then streams the session's row count
///   until the client cancels.
/// - `AddEach` (bidirectional) inserts each message in a scope of its own; a name starting
///   with `bad` rolls back that message only.
struct ItemsService: RegistrableRPCService {
    static let add = MethodDescriptor(fullyQualifiedService: "test.Items", method: "Add")
    static let addSlowly = MethodDescriptor(fullyQualifiedService: "test.Items", method: "AddSlowly")
    static let watch = MethodDescriptor(fullyQualifiedService: "test.Items", method: "Watch")
    static let addEach = MethodDescriptor(fullyQualifiedService: "test.Items", method: "AddEach")

    let backend: SessionBackend
    let root: ScopeRoot

    func registerMethods<Transport: ServerTransport>(with router: inout RPCRouter<Transport>) {
        let backend = backend
        let root = root
        router.registerHandler(
            forMethod: Self.add,
            deserializer: JSONCodec<Item>(),
            serializer: JSONCodec<ItemEcho>()
        ) { request, _ in
            let item = try await ServerRequest(stream: request).message
            let session = try await backend.session()
            _ = try await session.insert(item.name)
            if item.name.hasPrefix("fail") { throw RPCError(code: .alreadyExists, message: "refused \(item.name)") }
            let echo = ItemEcho(
                requestID: ScopedValues.current.requestID,
                tag: ScopedValues.current.tag,
                names: try await session.names()
            )
            return StreamingServerResponse(single: ServerResponse(message: echo))
        }
        router.registerHandler(
            forMethod: Self.addSlowly,
            deserializer: JSONCodec<Item>(),
            serializer: JSONCodec<ItemEcho>()
        ) { request, _ in
            let item = try await ServerRequest(stream: request).message
            _ = try await backend.session().insert(item.name)
            try? await Task.sleep(for: .seconds(5))
            return StreamingServerResponse(single: ServerResponse(message: ItemEcho(names: [])))
        }
        router.registerHandler(
            forMethod: Self.watch,
            deserializer: JSONCodec<Item>(),
            serializer: JSONCodec<ItemEcho>()
        ) { request, _ in
            let item = try await ServerRequest(stream: request).message
            _ = try await backend.session().insert(item.name)
            return StreamingServerResponse { writer in
                while true {
                    let names = try await backend.session().names()
                    try await writer.write(ItemEcho(requestID: ScopedValues.current.requestID, names: names))
                    try await Task.sleep(for: .milliseconds(5))
                }
            }
        }
        router.registerHandler(
            forMethod: Self.addEach,
            deserializer: JSONCodec<Item>(),
            serializer: JSONCodec<ItemEcho>()
        ) { request, _ in
            StreamingServerResponse { writer in
                try await request.messages.forEachMessage { item in
                    _ = try await backend.session().insert(item.name)
                    if item.name.hasPrefix("bad") { throw RPCError(code: .invalidArgument, message: "bad item") }
                    return item.name
                } then: { result in
                    switch result {
                    case .success(let name):
                        let committed = try await root.withScope { try await backend.session().names() }
                        try await writer.write(
                            ItemEcho(
                                requestID: ScopedValues.current.requestID,
                                names: [name],
                                committed: committed.contains(name)
                            )
                        )
                    case .failure:
                        try await writer.write(ItemEcho(names: [], committed: false))
                    }
                }
                return [:]
            }
        }
    }
}
