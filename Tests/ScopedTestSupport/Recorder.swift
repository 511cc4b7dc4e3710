import Synchronization

/// Records values from any task, in the order they arrive, for tests that assert what
/// happened and in which order.
public final class Recorder<Element: Sendable>: Sendable {
    private let recorded = Mutex<[Element]>([])

    /// Creates an empty recorder.
    public init() {}

    /// Appends `element`.
    public func record(_ element: Element) {
        recorded.withLock { $0.append(element) }
    }

    /// Everything recorded so far, oldest first.
    public var all: [Element] { recorded.withLock { $0 } }
}
