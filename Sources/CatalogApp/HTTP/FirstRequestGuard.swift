import NIOCore
import NIOHTTP1

/// Guards a new connection until its first request is decided, where hummingbird-websocket's
/// upgrade channel does not: a head that does not arrive within `timeout` closes the
/// connection, and a head that cannot be parsed (too large, too many fields) is answered 400
/// and closes it.
///
/// The upgrade channel installs Hummingbird's idle timeout and parse-error response only once
/// the first head has been decided (upgrade or not); before, a client sending half a header, or
/// an oversized one, would hold its connection open for ever. Added at the end of the pipeline,
/// the guard sees the first decoded part (not upgraded: Hummingbird's own handling takes over),
/// the upgrade event (a WebSocket), or the decoder's error.
final class FirstRequestGuard: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart

    private let timeout: TimeAmount
    // Touched only on the channel's event loop, as NIO calls a handler.
    private var timer: Scheduled<Void>?
    private var decided = false

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
        decide()
        context.fireChannelRead(data)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case HTTPServerUpgradeEvents.upgradeComplete = event { decide() }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard !decided, error is HTTPParserError else { return context.fireErrorCaught(error) }
        decide()
        let head = HTTPResponseHead(
            version: .http1_1,
            status: .badRequest,
            headers: ["Connection": "close", "Content-Length": "0"]
        )
        context.write(NIOAny(HTTPServerResponsePart.head(head)), promise: nil)
        context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil)))
            .whenComplete { _ in
                context.close(promise: nil)
            }
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        context.fireChannelInactive()
    }

    private func decide() {
        guard !decided else { return }
        decided = true
        timer?.cancel()
    }
}
