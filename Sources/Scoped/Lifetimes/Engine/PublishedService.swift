import Synchronization

/// The slot a root publishes a built app service in: set once, then read by every request,
/// under a lock of its own that no other service's read takes.
///
/// Under a lock, not in an `AtomicLazyReference`: the standard library does not inline
/// `AtomicLazyReference.load()`, which then looks up its generic metadata on every read,
/// 130 ns on this project's machine where a lock taken and released costs 15 ns.
final class PublishedService: Sendable {
    /// The service's key, by identity.
    let id: ObjectIdentifier
    private let box = Mutex<AnyValueBox?>(nil)

    init(id: ObjectIdentifier) { self.id = id }

    /// The published service, once there is one.
    var published: AnyValueBox? { box.withLock { $0 } }

    /// Publishes `box` unless a service is published already.
    func publish(_ box: AnyValueBox) {
        self.box.withLock { published in
            if published == nil { published = box }
        }
    }
}
