import Scoped
import Synchronization

/// An application root that can be replaced while the application runs, after a
/// configuration reload.
///
/// Each scope opens on the root current when it starts and keeps it to the end: requests in
/// flight keep the root they started with, new requests see the new one. ``reload(to:validationScope:)``
/// makes a new root current only once it has validated, carrying over the app services whose
/// inputs did not change, when the roots are created with a ``ReloadRecorder``:
///
/// ```swift
/// let reload = try await reloadable.reload(to: newRoot)
/// logger.notice("Reloaded: \(reload.summary)")
/// await reload.previous.shutdown(abandoningAfter: .seconds(10))
/// ```
public final class ReloadableScopeRoot: Sendable {
    private struct State {
        var root: ScopeRoot
        var generation = 1
        var reloading = false
    }

    private let state: Mutex<State>

    /// Starts with `root` as the current root, generation 1.
    public init(_ root: ScopeRoot) {
        self.state = Mutex(State(root: root))
    }

    /// The root new scopes open on.
    public var current: ScopeRoot { currentRoot() }

    /// The generation of the current root: 1 for the first, one more for each root made current
    /// since.
    public var generation: Int { state.withLock { $0.generation } }

    /// Makes `newRoot` current, atomically, and returns the root it replaces; no validation,
    /// nothing carried over.
    ///
    /// Scopes already open keep the previous root; call `ScopeRoot.shutdown()` on it to wait
    /// for them and close its app services. ``reload(to:validationScope:)`` is the safe way to
    /// apply a new configuration.
    @discardableResult
    public func replace(with newRoot: ScopeRoot) -> ScopeRoot {
        state.withLock { state in
            defer {
                state.root = newRoot
                state.generation += 1
            }
            return state.root
        }
    }

    /// Builds `newRoot` beside the current root, validates it, and only then makes it current.
    ///
    /// 1. Each app service the current root built is **carried over** to `newRoot`, as the same
    ///    instance, when every entry it read while it was built holds an equal value in
    ///    `newRoot` (compared with `==` for `Equatable` values, by identity for classes) and
    ///    every service it read was carried over too. The others are rebuilt by `newRoot`, and
    ///    all of them when the current root has no ``ReloadRecorder`` to know what they read.
    /// 2. `newRoot` is validated (`ScopeRoot.validate(scope:)`), which builds its other app
    ///    services. When that finds a problem, the reload is **rejected**: `newRoot` is shut
    ///    down, closing only what it built itself, and the current root goes on serving with
    ///    everything it holds untouched.
    /// 3. `newRoot` becomes current. From then on it closes the services carried over, and the
    ///    previous root closes only the ones it did not hand over.
    ///
    /// Scopes open on the previous root, and scopes opened inside them, finish there. Shut it
    /// down (``ScopeReload/previous``) to close its replaced services once they have.
    ///
    /// - Parameters:
    ///   - newRoot: the root built from the new configuration; not yet used.
    ///   - validationScope: what a request scope sets when it opens, for validation.
    /// - Returns: the generation made current, and what was carried over and rebuilt.
    /// - Throws: ``ScopeReloadError``; the current root is then unchanged.
    /// - Precondition: `newRoot` is not the current root: a reload builds a new root from the
    ///   new configuration, so no configuration can reach this; passing the current one is a
    ///   programming error.
    public func reload(
        to newRoot: ScopeRoot,
        validationScope: (inout ScopedValues) throws -> Void = { _ in }
    ) async throws(ScopeReloadError) -> ScopeReload {
        let previous = try state.withLock { state throws(ScopeReloadError) in
            precondition(state.root !== newRoot, "reload(to:) needs a new root, not the current one")
            guard !state.reloading else { throw .reloadInProgress }
            state.reloading = true
            return state.root
        }
        defer { state.withLock { $0.reloading = false } }
        let (carried, rebuilt) = newRoot.carryOver(from: previous)
        let problems = await newRoot.validate(scope: validationScope)
        guard problems.isEmpty else {
            await newRoot.shutdown()
            previous.tellReloaded(generation: generation, applied: false)
            throw .validationFailed(problems)
        }
        let generation = state.withLock { state in
            state.root = newRoot
            state.generation += 1
            return state.generation
        }
        newRoot.takeOverClosing(of: carried, from: previous)
        newRoot.tellReloaded(generation: generation, applied: true)
        return ScopeReload(
            generation: generation,
            carriedOver: carried.map { $0.key.name },
            rebuilt: rebuilt,
            previous: previous
        )
    }

    /// Runs `operation` in a new scope of the current root.
    ///
    /// See `ScopeRoot.withScope(_:operation:)`. Inlined, as that one is, so that a request on
    /// a root that reloads costs one uncontended lock more than on a plain root, not a generic
    /// call.
    @inlinable
    nonisolated(nonsending) public func withScope<R>(
        _ update: (inout ScopedValues) throws -> Void = { _ in },
        operation: () async throws -> R
    ) async throws -> R {
        try await currentRoot().withScope(update, operation: operation)
    }

    /// ``current``, for inlined callers.
    @usableFromInline
    func currentRoot() -> ScopeRoot { state.withLock { $0.root } }
}

extension ReloadableScopeRoot: ScopeRootSource {}
