import Synchronization

/// The slot a root publishes a built app service in: set once, then read by every request.
///
/// It also remembers which services' constructions have read it, for the root's dependency
/// graph: a scope service built by every request (a session reading its database) finds its
/// read recorded here, under the lock the read takes anyway, and takes no lock the root's other
/// services share.
///
/// Under a lock, not in an `AtomicLazyReference`: the standard library does not inline
/// `AtomicLazyReference.load()`, which then looks up its generic metadata on every read,
/// 130 ns on this project's machine where a lock taken and released costs 15 ns (session 35).
final class PublishedService: Sendable {
    private struct State {
        var box: AnyValueBox?
        /// The keys of the services whose construction read this one, recorded already.
        var readers: Set<ObjectIdentifier> = []
    }

    /// The service's key, by identity.
    let id: ObjectIdentifier
    private let state = Mutex(State())

    init(id: ObjectIdentifier) { self.id = id }

    /// The published service, once there is one.
    var published: AnyValueBox? { state.withLock { $0.box } }

    /// The published service, once there is one, read by the construction of the service
    /// `reader`; and whether that is the first such read since it was published.
    func published(readBy reader: ObjectIdentifier) -> (box: AnyValueBox?, isFirstRead: Bool) {
        state.withLock { state in
            guard let box = state.box else { return (nil, false) }
            return (box, state.readers.insert(reader).inserted)
        }
    }

    /// Publishes `box` unless a service is published already.
    func publish(_ box: AnyValueBox) {
        state.withLock { state in
            if state.box == nil { state.box = box }
        }
    }
}
