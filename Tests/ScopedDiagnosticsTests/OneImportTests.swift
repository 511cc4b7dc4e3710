import ScopedDiagnostics
import Testing

// This file imports nothing of Scoped but `ScopedDiagnostics`: it compiles only while that one
// import gives a file the core, as the README's Install section promises.

private enum OneImportClockKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.app
    static func makeValue() async throws -> Int { 1 }
}

private enum OneImportSessionKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.scope
    static func makeValue() async throws -> Int { try await ScopedValues.current.service(OneImportClockKey.self) + 1 }
}

@Test func importingDiagnosticsAloneGivesTheCoreAndTheRecorderSeesTheRead() async throws {
    let root = ScopeRoot(services: [OneImportSessionKey.self], observers: [DependencyGraphRecorder()])
    #expect(await root.validate().isEmpty)
    let graph = try #require(root.dependencyGraph())
    #expect(graph.edges == [DependencyGraph.Edge(from: OneImportSessionKey.name, to: OneImportClockKey.name)])
    #expect(graph.appServiceBuilds.map(\.name) == [OneImportClockKey.name])
    await root.shutdown()
}
