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
