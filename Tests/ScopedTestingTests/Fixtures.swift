import Scoped
import Synchronization

protocol Clock: Sendable {
    func now() -> Int
}

/// The live clock: counts its constructions, which tests must never cause.
struct SystemClock: Clock {
    static let constructions = Mutex(0)
    init() { Self.constructions.withLock { $0 += 1 } }
    func now() -> Int { 1_700_000_000 }
}

struct FixedClock: Clock {
    let time: Int
    func now() -> Int { time }
}

/// What a test reads after the failure is recorded.
struct UnimplementedClock: Clock {
    func now() -> Int { 0 }
}

extension ScopedValues {
    @Entry(testValue: UnimplementedClock()) var clock: any Clock = SystemClock()
    @Entry var greeting: String = "hello"
    @Entry var locale: String = "en"
    @Entry(testValue: "stand-in") var liveGreeting: String = "live"
}

/// App-lifetime state that a test mutates: each test scope must start from a fresh one.
final class VisitCounter: Sendable {
    private let count = Mutex(0)
    func visit() -> Int {
        count.withLock {
            $0 += 1
            return $0
        }
    }
}

enum VisitCounterKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.app
    static func makeValue() async throws -> VisitCounter { VisitCounter() }
}
