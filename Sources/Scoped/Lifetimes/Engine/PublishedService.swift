import Synchronization

/// The slot a root publishes a built app service in: set once, read without a lock.
final class PublishedService: Sendable {
    /// The service's key, by identity.
    let id: ObjectIdentifier
    let box = AtomicLazyReference<AnyValueBox>()

    init(id: ObjectIdentifier) { self.id = id }
}
