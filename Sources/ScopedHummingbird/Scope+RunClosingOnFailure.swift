import Scoped

extension Scope {
    /// Runs `operation` in the scope; when it throws, closes the scope with the outcome
    /// `outcome` gives for the error, then rethrows it.
    ///
    /// Every piece of a request's work (the handler, a body written in memory or streamed) ends
    /// the request when it fails. Close failures then go to the root's close-error handler.
    func runClosingOnFailure<R>(
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
