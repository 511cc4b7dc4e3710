import NIOCore

/// Closes a new connection whose first request head has not fully arrived within `timeout`.
///
/// hummingbird-websocket's upgrade channel installs Hummingbird's idle timeout only once the
/// first request head has been parsed, so without this a client that sends half a header holds
/// its connection open for ever. It watches the raw bytes for the blank line that ends the
/// head; after that, Hummingbird's own idle timeout takes over.
final class FirstRequestHeadTimeout: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let timeout: TimeAmount
    // Touched only on the channel's event loop.
    nonisolated(unsafe) private var timer: Scheduled<Void>?
    nonisolated(unsafe) private var headEnded = false
    /// The last bytes of the previous read, so that a blank line split across reads is found.
    nonisolated(unsafe) private var carry: [UInt8] = []

    init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let channel = context.channel
        timer = context.eventLoop.scheduleTask(in: timeout) { channel.close(promise: nil) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if !headEnded {
            let bytes = carry + Array(unwrapInboundIn(data).readableBytesView)
            if Self.containsBlankLine(bytes) {
                headEnded = true
                timer?.cancel()
                carry = []
            } else {
                carry = Array(bytes.suffix(3))
            }
        }
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        context.fireChannelInactive()
    }

    private static func containsBlankLine(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= 4 else { return false }
        for index in 0...(bytes.count - 4)
        where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return true
        }
        return false
    }
}
