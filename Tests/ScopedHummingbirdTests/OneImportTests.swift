import Hummingbird
import Logging
import ScopedHummingbird
import Testing

// This file imports nothing of Scoped but `ScopedHummingbird` (and Hummingbird itself, for the
// application): it compiles only while that one import gives a file the core and everything the
// article's application uses (`ScopeRootService`, `addScopeRoot`), as the README's Install section
// promises.

private enum OneImportGreetingKey: ScopedKey {
    static let defaultValue = "Hello"
}

@Test func importingHummingbirdAloneGivesTheCore() async throws {
    let root = ScopeRoot()
    let read = try await root.withScope {
        withScopedValues({ $0[OneImportGreetingKey.self] = "Ahoy" }) { ScopedValues.current[OneImportGreetingKey.self] }
    }
    #expect(read == "Ahoy")
    #expect(ScopedValues.current[OneImportGreetingKey.self] == "Hello")
    await root.shutdown()
}

@Test func importingHummingbirdAloneGivesTheRootsService() async throws {
    let root = ScopeRoot()
    var app = Application(router: Router(), logger: Logger(label: "one-import"))
    app.addScopeRoot(ScopeRootService(root: root, logger: app.logger))
    #expect(app.services.count == 1)
    await root.shutdown()
}
