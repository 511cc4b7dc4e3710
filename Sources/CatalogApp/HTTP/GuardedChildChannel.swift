import Hummingbird
package import HummingbirdCore
package import Logging
package import NIOCore

/// A server child channel set up as `base` does, with a ``FirstRequestGuard`` at the end of the
/// pipeline.
///
/// The load benchmark's hand-wired server serves through the same channel, so that the two
/// servers differ only in Scoped.
package struct GuardedChildChannel<Base: ServerChildChannel>: ServerChildChannel {
    package typealias Value = Base.Value

    let base: Base
    /// How long the first request head may take.
    let timeout: TimeAmount

    /// `base`, guarded until its first request head for `timeout`.
    package init(base: Base, timeout: TimeAmount) {
        self.base = base
        self.timeout = timeout
    }

    package func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Base.Value> {
        base.setup(channel: channel, logger: logger)
            .flatMapThrowing { value in
                try channel.pipeline.syncOperations.addHandler(FirstRequestGuard(timeout: timeout))
                return value
            }
    }

    package func handle(value: Base.Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}
