extension Scope {
    /// Runs `operation` in the scope; when it throws, closes the scope with the outcome
    /// `outcome` gives for the error, then rethrows it.
    ///
    /// For work whose every piece ends the unit of work when it fails: a request's handler and
    /// its body, handed-off work. An adapter runs its framework's handler in it, and closes the
    /// scope itself on success, once the response's body has been written (see
    /// <doc:WritingAnAdapter>). Close failures on this path go to the root's close-error handler;
    /// the operation's error is the one rethrown.
    ///
    /// - Parameters:
    ///   - outcome: the outcome the scope closes with for the error `operation` threw; by
    ///     default `ScopeOutcome(endingWith:)`, which makes a `CancellationError` `cancelled`
    ///     and any other error a `failure`.
    ///   - operation: the work, run inside the scope.
    /// - Returns: what `operation` returns; the scope is still open.
    /// - Throws: what `operation` throws, after the scope has closed.
    @inlinable
    nonisolated(nonsending) public func runClosingOnFailure<R>(
        outcome: (any Error) -> ScopeOutcome = { ScopeOutcome(endingWith: $0) },
        _ operation: () async throws -> R
    ) async throws -> R {
        do {
            return try await run(operation)
        } catch {
            try? await close(outcome(error))
            throw error
        }
    }
}
