import MetricsTestKit
import ScopedInstrumentation
import Testing

// This file imports nothing of Scoped but `ScopedInstrumentation`: it compiles only while that one
// import gives a file the core, as the README's Install section promises.

private enum OneImportGreetingKey: ScopedKey {
    static let defaultValue = "Hello"
}

@Test func importingInstrumentationAloneGivesTheCoreAndTheObserverCountsTheScope() async throws {
    let metrics = TestMetrics()
    let root = ScopeRoot(observers: [ScopeInstrumentation(metricsFactory: metrics)])
    let read = try await root.withScope {
        withScopedValues({ $0[OneImportGreetingKey.self] = "Ahoy" }) { ScopedValues.current[OneImportGreetingKey.self] }
    }
    #expect(read == "Ahoy")
    #expect(ScopedValues.current[OneImportGreetingKey.self] == "Hello")
    #expect(metrics.counterTotal(label: "scoped_scopes_total", dimensions: [("outcome", "success")]) == 1)
    await root.shutdown()
}
