import Scoped
import ScopedTesting
import Testing

// The README's testing example, compiled and run.
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

@Test(.scoped { $0.greeter = PirateGreeter() })
func greetsLikeAPirate() {
    #expect(WelcomeHandler().handle("Ada") == "Ahoy, Ada")
}
