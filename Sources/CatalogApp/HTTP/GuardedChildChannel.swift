import Hummingbird
import HummingbirdCore
import Logging
import NIOCore

/// A server child channel set up as `base` does, with a ``FirstRequestGuard`` at the end of the
/// pipeline.
struct GuardedChildChannel<Base: ServerChildChannel>: ServerChildChannel {
    let base: Base
    /// How long the first request head may take.
    let timeout: TimeAmount

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Base.Value> {
        base.setup(channel: channel, logger: logger)
            .flatMapThrowing { value in
                try channel.pipeline.syncOperations.addHandler(FirstRequestGuard(timeout: timeout))
                return value
            }
    }

    func handle(value: Base.Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}
