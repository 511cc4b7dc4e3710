import Foundation
import Scoped
import Testing

// The README's example, compiled and run. `readmeShowsThisExample` keeps the two identical.
// README-EXAMPLE-BEGIN
protocol Greeter: Sendable { func greet(_ name: String) -> String }
struct EnglishGreeter: Greeter { func greet(_ name: String) -> String { "Hello, \(name)" } }
struct PirateGreeter: Greeter { func greet(_ name: String) -> String { "Ahoy, \(name)" } }

extension ScopedValues {
    @Entry var greeter: any Greeter = EnglishGreeter()  // declare, with a default
}

struct WelcomeHandler {
    @Scoped(\.greeter) var greeter  // read: resolved against the current scope
    func handle(_ name: String) -> String { greeter.greet(name) }
}
// README-EXAMPLE-END

struct ReadmeExampleTests {
    @Test func exampleBehavesAsTheReadmeSays() {
        let handler = WelcomeHandler()
        #expect(handler.handle("Ada") == "Hello, Ada")
        let overridden = withScopedValues({ $0.greeter = PirateGreeter() }) {
            handler.handle("Ada")
        }
        #expect(overridden == "Ahoy, Ada")
        #expect(handler.handle("Ada") == "Hello, Ada")
    }

    @Test func readmeShowsThisExample() throws {
        let root = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let readme = try String(contentsOf: root.appending(path: "README.md"), encoding: .utf8)
        let test = try String(contentsOf: URL(filePath: #filePath), encoding: .utf8)
        let begin = try #require(test.range(of: "// README-EXAMPLE-BEGIN\n"))
        let end = try #require(test.range(of: "// README-EXAMPLE-END"))
        let declarations = String(test[begin.upperBound..<end.lowerBound])
        #expect(readme.contains(declarations), "README.md must show the declarations compiled here, unchanged")
        #expect(readme.contains("handler.handle(\"Ada\")  // \"Hello, Ada\""))
        #expect(readme.contains("withScopedValues({ $0.greeter = PirateGreeter() }) {"))
        #expect(readme.contains("handler.handle(\"Ada\")  // \"Ahoy, Ada\""))
    }
}
