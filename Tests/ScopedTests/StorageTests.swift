@testable import Scoped
import ScopedDiagnostics
import Synchronization
import Testing

/// Counts live instances, to prove scopes release what they store.
final class Tracked: Sendable {
    static let alive = Mutex(0)
    let id: Int
    init(id: Int) {
        self.id = id
        Self.alive.withLock { $0 += 1 }
    }
    deinit { Self.alive.withLock { $0 -= 1 } }
}

/// Larger than a slot's five words, so it is stored boxed.
struct Wide: Sendable, Equatable {
    var a = 1, b = 2, c = 3, d = 4, e = 5, f = 6, g = 7, h = 8
}

extension ScopedValues {
    @Entry var wide: Wide = Wide()
    @Entry var tracked: Tracked? = nil
}

@Suite(.serialized)
struct StorageTests {
    @Test func valuesLargerThanASlotRoundTripThroughNestedScopes() {
        var changed = Wide()
        changed.h = 80
        withScopedValues({ $0.wide = changed }) {
            #expect(ScopedValues.current.wide == changed)
            withScopedValues({ $0.copyright = "© Inner" }) {
                #expect(ScopedValues.current.wide == changed, "copied into the child scope's node")
            }
        }
        #expect(ScopedValues.current.wide == Wide())
    }

    @Test func scopesReleaseWhatTheyStoreIncludingReplacedValues() {
        let before = Tracked.alive.withLock { $0 }
        withScopedValues({
            $0.tracked = Tracked(id: 1)
            $0.tracked = Tracked(id: 2)  // replaces, and releases, the first
            $0.set(Tracked(id: 3))
        }) {
            #expect(Tracked.alive.withLock { $0 } == before + 2)
            withScopedValues({ $0.copyright = "© Child" }) {
                #expect(ScopedValues.current.tracked?.id == 2)
                #expect(ScopedValues.current.object(Tracked.self)?.id == 3)
            }
        }
        #expect(Tracked.alive.withLock { $0 } == before)
    }

    @Test func describingReadsEachEntrysKeyTypeKindLifetimeAndOriginBackFromItsSlot() {
        let description = withScopedValues({
            $0.wide = Wide()
            $0.set(Tracked(id: 4))
            $0.set(AppClockKey.self, to: Resource(name: "appClock", label: "provided"))
        }) {
            withScopedValues({ $0.copyright = "© Child" }) { ScopedValues.current.describe() }
        }
        let byName = Dictionary(uniqueKeysWithValues: description.entries.map { ($0.name, $0) })
        // Boxed, yet described as the type its key declares.
        #expect(byName["wide"]?.valueType == String(reflecting: Wide.self))
        #expect(byName["wide"]?.kind == .value)
        #expect(byName["wide"]?.origin == .override(depth: 1))
        #expect(byName["wide"]?.lifetime == nil)
        #expect(byName[String(reflecting: Tracked.self)]?.kind == .object)
        #expect(byName["appClock"]?.kind == .service)
        #expect(byName["appClock"]?.lifetime == .app)
        #expect(byName["appClock"]?.valueType == String(reflecting: Resource.self))
        #expect(byName["copyright"]?.origin == .override(depth: 2))
        #expect(description.entries.allSatisfy { $0.variant == nil })
    }
}
