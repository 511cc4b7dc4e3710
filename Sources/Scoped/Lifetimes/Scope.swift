import Synchronization

/// A lifetime scope you open and close yourself, for a unit of work that does not end where
/// one closure returns: a response whose body is written after its handler returned, a
/// connection that outlives the call that accepted it.
///
/// Prefer ``withScope(_:operation:)``, which cannot forget to close. Where the end of
/// the work is an event rather than a return, open a scope on the root, run each piece of the
/// work in it with ``run(_:)``, and close it once with the outcome:
///
/// ```swift
/// let scope = try root.openScope { $0.requestID = id }
/// let response = try await scope.run { try await handler(request) }
/// // … the response body is written later, also inside `scope.run` …
/// try await scope.close(.success)
/// ```
///
/// Only the first ``close(_:)`` closes; later calls return at once, so every path of the work
/// may close it. A scope that is released without being closed closes itself as
/// ``ScopeOutcome/cancelled`` (in a new task, since a deinitializer cannot wait): its
/// services still close and its root still drains.
public final class Scope: Sendable {
    /// The scope's values: what reads inside ``run(_:)`` resolve to.
    public let values: ScopedValues
    @usableFromInline let context: ServiceOwner

    /// Opens a child scope of `parent`'s scope `context`, counted open on its root until it
    /// closes.
    ///
    /// `site` is where its work was handed off, for a scope
    /// ``handOff(timeout:fileID:line:operation:)`` opens.
    init<Failure: Error>(
        childOf parent: ScopedValues,
        in context: ServiceOwner,
        handedOffAt site: HandedOffWork.Site? = nil,
        update: (inout ScopedValues) throws(Failure) -> Void
    ) throws(Failure) {
        (values, self.context) = try parent.openChildScope(of: context, update, handedOffAt: site)
    }

    /// A scope opened already: `values` bound to `context`, counted open on its root.
    init(opened values: ScopedValues, _ context: ServiceOwner) {
        self.values = values
        self.context = context
    }

    deinit {
        guard !context.isClosed.load(ordering: .relaxed) else { return }
        let context = context
        let node = values.node
        Task { try? await context.end(.cancelled, with: node) }
    }

    /// Whether the scope has closed, or begun closing: ``close(_:)`` has been called.
    public var isClosed: Bool { context.isClosed.load(ordering: .acquiring) }

    /// Runs `operation` with the scope's values current: reads resolve to this scope, and the
    /// ``ScopedLifetime/scope`` services it builds belong to it.
    ///
    /// - Throws: what `operation` throws. A read of a service after the scope closed throws
    ///   ``ScopedError/scopeEnded(entry:)``.
    @inlinable
    nonisolated(nonsending) public func run<R>(
        _ operation: () async throws -> R
    ) async rethrows -> R {
        try await ScopedValues.taskLocalNode.withValue(values.node, operation: operation)
    }

    /// Closes the scope: the services it built close newest first, each told `outcome`.
    ///
    /// Only the first call closes; later calls return at once without waiting for it.
    ///
    /// - Throws: a ``ScopeCloseError`` when `outcome` is ``ScopeOutcome/success`` and a service
    ///   failed to close (a transaction that did not commit). For other outcomes close failures
    ///   go to the root's close-error handler.
    ///
    /// Inlinable, so that an adapter's close is one async call (the context's end), not two.
    @inlinable
    nonisolated(nonsending) public func close(_ outcome: ScopeOutcome) async throws {
        // Its services close with its values current: bound by the scope's context only when
        // there are services to close, and it is not bound already. The context's closed state
        // is the scope's: only the first call ends it.
        try await context.end(outcome, with: values.node)
    }
}
