import NIOCore
import NIOPosix

/// An HTTP/1.1 connection on a plain TCP socket that can stop reading at any byte: what a
/// client that goes away mid-response looks like to the server.
///
/// (Reading slowly does not hold a server mid-body on loopback: its socket buffers take
/// megabytes. Tests that need a server held mid-body hold it on the server's side.)
public struct RawHTTPConnection: Sendable {
    private let channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>

    /// Connects to `127.0.0.1:port`.
    public init(port: Int) async throws {
        channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
    }

    /// Sends `request` as is, then reads the response's bytes until `enough` returns true for
    /// what was read so far or the server closes the connection; then closes the connection.
    ///
    /// A server that neither sends enough nor closes within `timeout` has the connection closed
    /// on it, so a test fails instead of hanging.
    ///
    /// - Returns: every byte read, as text.
    public func exchange(
        _ request: String,
        timeout: Duration = .seconds(10),
        until enough: (String) -> Bool = { _ in false }
    ) async throws -> String {
        try await exchange(bytes: Array(request.utf8), timeout: timeout, until: enough)
    }

    /// Sends `bytes` as they are (a request followed by anything, valid or not), then reads as
    /// ``exchange(_:timeout:until:)`` does.
    ///
    /// - Returns: every byte read, as text.
    public func exchange(
        bytes: [UInt8],
        timeout: Duration = .seconds(10),
        until enough: (String) -> Bool = { _ in false }
    ) async throws -> String {
        let channel = channel
        let watchdog = Task {
            try await Task.sleep(for: timeout)
            try await channel.channel.close()
        }
        defer { watchdog.cancel() }
        return try await channel.executeThenClose { inbound, outbound in
            try await outbound.write(ByteBuffer(bytes: bytes))
            var received = ""
            for try await var chunk in inbound {
                received += chunk.readString(length: chunk.readableBytes) ?? ""
                if enough(received) { break }
            }
            return received
        }
    }

    /// The body of a complete chunked HTTP/1.1 response, its chunks joined; `nil` when the
    /// response is cut short, before its last (empty) chunk.
    public static func chunkedBody(of response: String) -> String? {
        let bytes = response.utf8[...]
        guard let headerEnd = bytes.firstRange(of: "\r\n\r\n".utf8) else { return nil }
        var rest = bytes[headerEnd.upperBound...]
        var body: [UInt8] = []
        while true {
            guard let lineEnd = rest.firstRange(of: "\r\n".utf8),
                let size = Int(String(decoding: rest[..<lineEnd.lowerBound], as: UTF8.self), radix: 16)
            else { return nil }
            rest = rest[lineEnd.upperBound...]
            if size == 0 { return String(decoding: body, as: UTF8.self) }
            guard rest.count >= size + 2 else { return nil }
            body += rest.prefix(size)
            rest = rest.dropFirst(size + 2)
        }
    }
}
