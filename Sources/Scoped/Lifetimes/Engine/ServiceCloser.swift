/// Closes a scope's built services, newest first, each bounded by its close timeout (or by
/// itself) and reported to the root's observers; knows nothing of the scope's state.
enum ServiceCloser {
    /// Closes the built services among `entries`, newest first, with their scope current.
    ///
    /// - Returns: the closes that threw or were abandoned; every close is attempted.
    @inline(__always)
    nonisolated(nonsending) static func closeEach(
        of entries: SmallList<ServiceOwner.Entry>,
        outcome: ScopeOutcome,
        registry: ScopeRegistry
    ) async -> [ScopeCloseError.Failure] {
        var failures: [ScopeCloseError.Failure] = []
        // Newest first: by descending `order`, found by scanning the few entries, so closing
        // allocates nothing.
        var previous = Int.max
        while let (key, box, order) = Self.newest(in: entries, before: previous) {
            previous = order
            do {
                // A close that bounds itself runs inline: no task, no timer.
                if !key.closeBoundsItself, let timeout = key.closeTimeout ?? registry.closeTimeout {
                    let entry = key.name
                    // Bounded: a close that does not return is abandoned, and the scope ends.
                    try await DeadlineWatchdog.shared.run(
                        { try await Self.close(key, box, outcome: outcome, registry: registry) },
                        abandoningAfter: timeout
                    ) { ScopeCloseTimeoutError(entry: entry, timeout: timeout) }
                } else {
                    try await Self.close(key, box, outcome: outcome, registry: registry)
                }
            } catch {
                failures.append(ScopeCloseError.Failure(entry: key.name, error: error))
            }
        }
        return failures
    }

    /// Closes one service, inside the root's observers' `close`, if any.
    @inline(__always)
    nonisolated(nonsending) private static func close(
        _ key: any ScopedServiceKey.Type,
        _ box: AnyValueBox,
        outcome: ScopeOutcome,
        registry: ScopeRegistry
    ) async throws {
        guard !registry.observers.observeServices else {
            return try await registry.observers.close(key, outcome: outcome) {
                try await key.close(erased: box, outcome: outcome)
            }
        }
        try await key.close(erased: box, outcome: outcome)
    }

    /// The built entry with the largest `order` below `limit`, or `nil`.
    private static func newest(
        in entries: SmallList<ServiceOwner.Entry>,
        before limit: Int
    ) -> (key: any ScopedServiceKey.Type, box: AnyValueBox, order: Int)? {
        // A scope that built one service, the common case, has nothing to compare (and
        // nothing to copy a second time).
        if entries.count == 1 {
            guard limit == .max, case .built(let box, let key, let order) = entries[0].slot else { return nil }
            return (key, box, order)
        }
        var newest: (key: any ScopedServiceKey.Type, box: AnyValueBox, order: Int)?
        for entry in entries {
            guard case .built(let box, let key, let order) = entry.slot, order < limit else { continue }
            if order > (newest?.order ?? -1) { newest = (key, box, order) }
        }
        return newest
    }
}

extension ScopedServiceKey {
    /// A service stored type-erased, as a value of its own type.
    static func value(erased box: AnyValueBox) -> any Sendable {
        (box as! ValueBox<Value>).value
    }

    /// Closes a service stored type-erased, so a scope can close services of any key without
    /// keeping a closure per service.
    static func close(erased box: AnyValueBox, outcome: ScopeOutcome) async throws {
        try await close((box as! ValueBox<Value>).value, outcome: outcome)
    }
}
