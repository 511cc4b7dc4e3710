import Hummingbird
import HummingbirdCore
import Logging
import NIOCore

/// A server child channel that closes connections whose first request head does not arrive in
/// time, then sets them up as `base` does.
struct HeadTimeoutChannel<Base: ServerChildChannel>: ServerChildChannel {
    let base: Base
    /// How long the first request head may take; `nil` for no limit.
    let timeout: TimeAmount?

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Base.Value> {
        do {
            if let timeout { try channel.pipeline.syncOperations.addHandler(FirstRequestHeadTimeout(timeout: timeout)) }
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        return base.setup(channel: channel, logger: logger)
    }

    func handle(value: Base.Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}
