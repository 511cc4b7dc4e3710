public import NIOCore
import NIOPosix

/// An HTTP/1.1 connection on a plain TCP socket that can stop reading at any byte: what a
/// client that goes away mid-response looks like to the server.
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
        until enough: @Sendable (String) -> Bool = { _ in false }
    ) async throws -> String {
        let channel = channel
        let watchdog = Task {
            try await Task.sleep(for: timeout)
            try await channel.channel.close()
        }
        defer { watchdog.cancel() }
        return try await channel.executeThenClose { inbound, outbound in
            try await outbound.write(ByteBuffer(string: request))
            var received = ""
            for try await var chunk in inbound {
                received += chunk.readString(length: chunk.readableBytes) ?? ""
                if enough(received) { break }
            }
            return received
        }
    }
}
