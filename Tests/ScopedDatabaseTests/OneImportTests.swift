import ScopedDatabase
import Testing

// This file imports nothing of Scoped but `ScopedDatabase`: it compiles only while that one import
// gives a file the core, as the README's Install section promises.

private enum OneImportGreetingKey: ScopedKey {
    static let defaultValue = "Hello"
}

@Test func importingDatabaseAloneGivesTheCore() async throws {
    let root = ScopeRoot()
    let read = try await root.withScope {
        withScopedValues({ $0[OneImportGreetingKey.self] = "Ahoy" }) { ScopedValues.current[OneImportGreetingKey.self] }
    }
    #expect(read == "Ahoy")
    #expect(ScopedValues.current[OneImportGreetingKey.self] == "Hello")
    await root.shutdown()
}
