import Synchronization

/// Hands `operation` off to run after the current unit of work, in a scope of its own that
/// keeps what it uses alive until it ends.
///
/// Use it for work a request starts but its client does not wait for: a notification, an
/// index refresh, a cache warm-up. A plain `Task { }` would run with the request's scope
/// after that scope closed, and its first read of a scope service would throw
/// ``ScopedError/scopeEnded(entry:)``. Work handed off here instead runs in a new child scope
/// of the current one, opened before `handOff` returns:
///
/// - It reads the current scope's values (its request ID, its principal, its overrides;
///   change them with ``withScopedValues(_:operation:)-1xu3d`` around the call), and builds its own ``ScopedLifetime/scope`` services (its own
///   transaction), which close when it ends: ``ScopeOutcome/success`` if it returned,
///   ``ScopeOutcome/failure(_:)`` if it threw.
/// - It is cancelled when it runs longer than `timeout`: its scope then closes as
///   ``ScopeOutcome/cancelled`` and the task throws ``ScopedError/timedOut(after:)``.
/// - It counts as open on the application root, so ``ScopeRoot/shutdown()`` waits for it:
///   graceful shutdown lets handed-off work finish, each bounded by its timeout.
///
/// ```swift
/// router.post("/movies/:id/ratings") { request, context in
///     let rating = try await ratings.rate(movieID: id, stars: stars)
///     handOff(timeout: .seconds(5)) {
///         await catalogEvents.publish(.rated(rating))  // after the response, in its own scope
///     }
///     return try JSONResponse.make(rating, status: .created)
/// }
/// ```
///
/// A test that uses ScopedTesting's `.scoped` trait or `withTestScope` and ends while work it
/// handed off still runs records an issue naming where it was handed off.
///
/// - Parameters:
///   - timeout: how long the work may run before it is cancelled.
///   - fileID: where the work is handed off, for that issue.
///   - line: the line it is handed off on.
///   - operation: the work.
/// - Returns: the task running the work. Awaiting its value is optional: what the work throws
///   ends there, and in the outcome its scope's services are told. Outside every application
///   root the work does not run, and the task throws ``ScopedError/outsideRoot(entry:)``.
@discardableResult
public func handOff(
    timeout: Duration,
    fileID: String = #fileID,
    line: Int = #line,
    operation: @escaping @Sendable () async throws -> Void
) -> Task<Void, any Error> {
    // Opened and counted now, before the current scope can close and before a shutdown can
    // find the root drained.
    let current = ScopedValues.current
    let scope: Scope
    do {
        scope = Scope(childOf: current, in: try current.parentScope(), label: "work handed off at \(fileID):\(line)") {
            _ in
        }
    } catch {
        // Outside every root: nothing to run the work in, and nothing would wait for it.
        return Task { throw error }
    }
    return Task {
        try await scope.runClosingOnFailure(outcome: { error in
            if case ScopedError.timedOut = error { .cancelled } else { ScopeOutcome(endingWith: error) }
        }) {
            try await AbandonableWork.run(operation, abandoningAfter: timeout) { ScopedError.timedOut(after: timeout) }
        }
        try await scope.close(.success)
    }
}
