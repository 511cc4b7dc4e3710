import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2
import Scoped
import ScopedGRPC
import Testing

/// A message as JSON, so that no protobuf code is generated in the build.
struct JSONCodec<Message: Codable & Sendable>: MessageSerializer, MessageDeserializer {
    func serialize<Bytes: GRPCContiguousBytes>(_ message: Message) throws -> Bytes {
        Bytes(try JSONEncoder().encode(message))
    }

    func deserialize<Bytes: GRPCContiguousBytes>(_ serializedMessageBytes: Bytes) throws -> Message {
        try JSONDecoder().decode(Message.self, from: serializedMessageBytes.withUnsafeBytes { Data($0) })
    }
}

/// What a conformance RPC asks for.
struct ItemRequest: Codable, Sendable {
    var name: String
    var mode = InsertMode.plain
    var chunks = 0
}

/// A streamed message: a chunk of an export, or a line.
struct Piece: Codable, Sendable {
    var text: String
}

/// The conformance app as a gRPC service: `Insert` (unary), `Export` and `Endless` (server
/// streaming).
struct ConformanceService: RegistrableRPCService {
    static let insert = MethodDescriptor(fullyQualifiedService: "conformance.Items", method: "Insert")
    static let export = MethodDescriptor(fullyQualifiedService: "conformance.Items", method: "Export")
    static let endless = MethodDescriptor(fullyQualifiedService: "conformance.Items", method: "Endless")

    let app: ConformanceApp

    func registerMethods<Transport: ServerTransport>(with router: inout RPCRouter<Transport>) {
        let app = app
        router.registerHandler(
            forMethod: Self.insert,
            deserializer: JSONCodec<ItemRequest>(),
            serializer: JSONCodec<Answer>()
        ) { request, _ in
            let item = try await ServerRequest(stream: request).message
            do {
                let answer = try await app.insert(item.name, mode: item.mode)
                return StreamingServerResponse(single: ServerResponse(message: answer))
            } catch is Refused {
                throw RPCError(code: .alreadyExists, message: "refused \(item.name)")
            }
        }
        registerStream(Self.export, on: &router) { item, number in
            number < item.chunks ? String(decoding: try await app.chunk(of: item.name), as: UTF8.self) : nil
        }
        registerStream(Self.endless, on: &router) { _, number in try await app.line(number) }
    }

    /// Registers `method`: it inserts the request's item, then streams piece after piece of what
    /// `piece` makes of the item and the piece's number, until `piece` returns `nil`.
    private func registerStream<Transport: ServerTransport>(
        _ method: MethodDescriptor,
        on router: inout RPCRouter<Transport>,
        piece: @escaping @Sendable (ItemRequest, Int) async throws -> String?
    ) {
        let app = app
        router.registerHandler(
            forMethod: method,
            deserializer: JSONCodec<ItemRequest>(),
            serializer: JSONCodec<Piece>()
        ) { request, _ in
            let item = try await ServerRequest(stream: request).message
            try await app.beginExport(item.name)
            return StreamingServerResponse { writer in
                for number in 0... {
                    guard let text = try await piece(item, number) else { break }
                    try await writer.write(Piece(text: text))
                }
                return [:]
            }
        }
    }
}

/// Runs `body` with a client of the conformance service that `server` serves, once it listens
/// on loopback.
func withClient(
    of server: GRPCServer<HTTP2ServerTransport.Posix>,
    _ body: @Sendable (any ConformanceClient) async throws -> Void
) async throws {
    let port = try #require(try await server.transport.listeningAddress.ipv4?.port)
    try await withGRPCClient(
        transport: .http2NIOPosix(target: .ipv4(address: "127.0.0.1", port: port), transportSecurity: .plaintext)
    ) { client in
        try await body(GRPCConformanceClient(client: client))
    }
}

/// The client of the gRPC stack.
struct GRPCConformanceClient<Transport: ClientTransport>: ConformanceClient {
    let client: GRPCClient<Transport>

    func insert(_ name: String, mode: InsertMode, requestID: String?) async throws -> InsertResponse {
        var metadata: Metadata = [:]
        if let requestID { metadata.addString(requestID, forKey: "x-request-id") }
        let request = ClientRequest(message: ItemRequest(name: name, mode: mode), metadata: metadata)
        let answer: @Sendable (ClientResponse<Answer>) async throws -> Answer? = { response in
            guard case .success(let contents) = response.accepted else { return nil }
            return try contents.message.get()
        }
        let answered = try await client.unary(
            request: request,
            descriptor: ConformanceService.insert,
            serializer: JSONCodec<ItemRequest>(),
            deserializer: JSONCodec<Answer>(),
            options: .defaults,
            onResponse: answer
        )
        return answered.map(InsertResponse.answered) ?? .refused
    }

    func export(_ name: String, chunks: Int, lengthKnown: Bool) async throws -> ExportResponse {
        try await client.serverStreaming(
            request: ClientRequest(message: ItemRequest(name: name, chunks: chunks)),
            descriptor: ConformanceService.export,
            serializer: JSONCodec<ItemRequest>(),
            deserializer: JSONCodec<Piece>(),
            options: .defaults
        ) { response in
            var body: [UInt8] = []
            do {
                for try await piece in response.messages { body += piece.text.utf8 }
                return ExportResponse(isComplete: true, body: body)
            } catch is RPCError {
                return ExportResponse(isComplete: false, body: body)
            }
        }
    }

    func leaveMidStream(_ name: String) async throws -> [String] {
        try await client.serverStreaming(
            request: ClientRequest(message: ItemRequest(name: name)),
            descriptor: ConformanceService.endless,
            serializer: JSONCodec<ItemRequest>(),
            deserializer: JSONCodec<Piece>(),
            options: .defaults
        ) { response in
            var lines: [String] = []
            for try await piece in response.messages {
                lines.append(piece.text)
                if lines.count == 4 { break }  // the client stops the call
            }
            return lines
        }
    }
}
