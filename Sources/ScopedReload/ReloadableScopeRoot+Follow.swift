import Scoped

extension ReloadableScopeRoot {
    /// Turns a stream of configuration snapshots into root generations: for each snapshot,
    /// builds a root with `makeRoot`, reloads to it (``reload(to:validationScope:)``), reports
    /// the outcome to `onReload`, and retires the root it replaced.
    ///
    /// A snapshot whose root cannot be made (`makeRoot` throws: an invalid value) or does not
    /// validate is rejected, and the current root goes on serving. Retired roots shut down
    /// concurrently, each when its open scopes have closed, abandoning what is left after
    /// `shutdownTimeout` (reported to the root's close-error handler); this returns once the
    /// stream has ended and every retired root has shut down. Cancel the calling task to stop.
    ///
    /// ```swift
    /// try await reloadable.follow(snapshots, makeRoot: makeRoot, shutdownTimeout: .seconds(10)) { outcome in
    ///     switch outcome {
    ///     case .success(let reload): logger.notice("Reloaded: \(reload.summary)")
    ///     case .failure(let error): logger.error("Reload rejected: \(error)")
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - snapshots: the configuration, each time it changes; swift-configuration's
    ///     `watchSnapshot`, or any sequence of your own.
    ///   - makeRoot: the root for one snapshot, built as at start-up and not yet validated.
    ///   - validationScope: what a request scope sets when it opens, for validation.
    ///   - shutdownTimeout: how long a retired root may take to drain and close; `nil` waits.
    ///   - onReload: told each snapshot's outcome, in order: the reload applied, or why it was
    ///     rejected (what `makeRoot` threw, or a ``ScopeReloadError``).
    /// - Throws: what `snapshots` throws; a rejected snapshot is reported, not thrown.
    public func follow<Snapshots: AsyncSequence>(
        _ snapshots: Snapshots,
        makeRoot: (Snapshots.Element) throws -> ScopeRoot,
        validationScope: (inout ScopedValues) throws -> Void = { _ in },
        shutdownTimeout: Duration?,
        onReload: (Result<ScopeReload, any Error>) async -> Void
    ) async throws {
        try await withThrowingDiscardingTaskGroup { retiring in
            for try await snapshot in snapshots {
                let outcome: Result<ScopeReload, any Error>
                do {
                    let root = try makeRoot(snapshot)
                    outcome = .success(try await reload(to: root, validationScope: validationScope))
                } catch let error as ScopeReloadError {
                    outcome = .failure(error)
                } catch {
                    current.tellReloaded(generation: generation, applied: false)
                    outcome = .failure(error)
                }
                if case .success(let reload) = outcome {
                    let previous = reload.previous
                    retiring.addTask {
                        if let shutdownTimeout {
                            await previous.shutdown(abandoningAfter: shutdownTimeout)
                        } else {
                            await previous.shutdown()
                        }
                    }
                }
                await onReload(outcome)
            }
        }
    }
}
