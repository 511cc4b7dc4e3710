import Synchronization

/// An application root that can be replaced while the application runs, for example after a
/// configuration reload.
///
/// Each scope opens on the root current when it starts and keeps it to the end: requests in
/// flight keep the snapshot they started with, new requests see the new root.
public final class ReloadableScopeRoot: Sendable {
    private let root: Mutex<ScopeRoot>

    /// Starts with `root` as the current root.
    public init(_ root: ScopeRoot) {
        self.root = Mutex(root)
    }

    /// The root new scopes open on.
    public var current: ScopeRoot { root.withLock { $0 } }

    /// Makes `newRoot` current, atomically, and returns the root it replaces.
    ///
    /// Scopes already open keep the previous root; call ``ScopeRoot/shutdown()`` on it to wait
    /// for them and close its app services.
    @discardableResult
    public func replace(with newRoot: ScopeRoot) -> ScopeRoot {
        root.withLock { current in
            defer { current = newRoot }
            return current
        }
    }

    /// Runs `operation` in a new scope of the current root.
    ///
    /// See ``ScopeRoot/withScope(_:operation:)``.
    nonisolated(nonsending) public func withScope<R>(
        _ update: (inout ScopedValues) throws -> Void = { _ in },
        operation: () async throws -> R
    ) async throws -> R {
        try await current.withScope(update, operation: operation)
    }
}
