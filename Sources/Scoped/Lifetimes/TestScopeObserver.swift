/// What a test root is told about reads that tests should not make; ScopedTesting records
/// them as test failures.
@usableFromInline
package final class TestScopeObserver: Sendable {
    private let onLiveDefaultRead: @Sendable (String) -> Void

    package init(onLiveDefaultRead: @escaping @Sendable (_ entry: String) -> Void) {
        self.onLiveDefaultRead = onLiveDefaultRead
    }

    /// A test read the live-only entry `entry` without overriding it.
    @usableFromInline
    func readLiveDefault(_ entry: String) {
        onLiveDefaultRead(entry)
    }
}
