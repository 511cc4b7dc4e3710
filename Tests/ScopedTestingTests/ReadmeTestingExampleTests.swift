import Foundation
import Scoped
import ScopedTesting
import Testing

// The README's testing example, compiled and run. `readmeShowsThisTestingExample` keeps the
// README's snippet identical to the test between the markers.
protocol Greeter: Sendable { func greet(_ name: String) -> String }
struct EnglishGreeter: Greeter { func greet(_ name: String) -> String { "Hello, \(name)" } }
struct PirateGreeter: Greeter { func greet(_ name: String) -> String { "Ahoy, \(name)" } }

extension ScopedValues {
    @Entry var greeter: any Greeter = EnglishGreeter()
}

struct WelcomeHandler {
    @Scoped(\.greeter) var greeter
    func handle(_ name: String) -> String { greeter.greet(name) }
}

// README-TESTING-BEGIN
@Test(.scoped { $0.greeter = PirateGreeter() })
func greetsLikeAPirate() {
    #expect(WelcomeHandler().handle("Ada") == "Ahoy, Ada")
}
// README-TESTING-END

@Test func outsideTheTraitTheDefaultIsRead() {
    #expect(WelcomeHandler().handle("Ada") == "Hello, Ada")
}

@Test func readmeShowsThisTestingExample() throws {
    let root = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    let readme = try String(contentsOf: root.appending(path: "README.md"), encoding: .utf8)
    let test = try String(contentsOf: URL(filePath: #filePath), encoding: .utf8)
    let begin = try #require(test.range(of: "// README-TESTING-BEGIN\n"))
    let end = try #require(test.range(of: "// README-TESTING-END"))
    let snippet = String(test[begin.upperBound..<end.lowerBound])
    #expect(readme.contains("```swift\n" + snippet + "```"), "README.md must show the test compiled here, unchanged")
}
