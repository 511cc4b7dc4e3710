@testable import Scoped
import Synchronization

/// A repository protocol used as an existential entry, as the example server does.
protocol TitleRepository: Sendable {
    func title(id: Int) -> String?
}

struct ProductionTitles: TitleRepository {
    func title(id: Int) -> String? { "production \(id)" }
}

struct MockTitles: TitleRepository {
    let titles: [Int: String]
    func title(id: Int) -> String? { titles[id] }
}

struct Theme: Sendable, Equatable {
    var cornerRadius = 4.0
    var accent = "blue"
}

/// An action value, like SwiftUI's `DismissAction`.
struct GreetAction: Sendable {
    let prefix: String
    func callAsFunction(_ name: String) -> String { "\(prefix), \(name)!" }
}

/// A type-keyed object, read with `@Scoped(Library.self)`.
final class Library: Sendable {
    let name: String
    init(name: String) { self.name = name }
}

/// Counts how often its default was built, to prove defaults are lazy and built once.
final class LazyDefaultProbe: Sendable {
    static let constructions = Mutex(0)
    init() { Self.constructions.withLock { $0 += 1 } }
}

extension ScopedValues {
    @Entry var copyright: String = "© Default"
    @Entry var retryLimit: Int?
    @Entry var titles: any TitleRepository = ProductionTitles()
    @Entry var theme: Theme = Theme()
    @Entry var greet: GreetAction = GreetAction(prefix: "Hello")
    @Entry var lazyProbe: LazyDefaultProbe = LazyDefaultProbe()
}

/// Sixty-four distinct keys, for tests and benchmarks of many overrides.
enum ManyKeys {
    struct Key<let index: Int>: ScopedKey {
        static var defaultValue: Int { -1 }
    }
}
