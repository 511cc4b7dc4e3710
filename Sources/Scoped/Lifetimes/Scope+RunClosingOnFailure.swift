extension Scope {
    /// Runs `operation` in the scope; when it throws, closes the scope with the outcome
    /// `outcome` gives for the error, then rethrows it.
    ///
    /// For work whose every piece ends the unit of work when it fails: a request's handler and
    /// its body, handed-off work. Close failures then go to the root's close-error handler.
    @inlinable
    nonisolated(nonsending) package func runClosingOnFailure<R>(
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
