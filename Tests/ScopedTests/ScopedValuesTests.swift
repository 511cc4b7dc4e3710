@testable import Scoped
import Synchronization
import Testing

struct ScopedValuesTests {
    @Test func readsTheDefaultWhenNothingOverrides() {
        #expect(ScopedValues.current.copyright == "© Default")
        #expect(ScopedValues().theme == Theme())
    }

    @Test func nestedOverrideWinsOnlyBelowIt() {
        var seen: [String] = []
        seen.append(ScopedValues.current.copyright)
        withScopedValues({ $0.copyright = "© Request" }) {
            seen.append(ScopedValues.current.copyright)
            withScopedValues({ $0.copyright = "© Handler" }) {
                seen.append(ScopedValues.current.copyright)
            }
            seen.append(ScopedValues.current.copyright)
        }
        seen.append(ScopedValues.current.copyright)
        #expect(seen == ["© Default", "© Request", "© Handler", "© Request", "© Default"])
    }

    @Test func overridingOneEntryKeepsTheOthersFromTheParent() {
        withScopedValues({
            $0.copyright = "© Outer"
            $0.requestID = "r-1"
        }) {
            withScopedValues({ $0.copyright = "© Inner" }) {
                #expect(ScopedValues.current.copyright == "© Inner")
                #expect(ScopedValues.current.requestID == "r-1")
            }
        }
    }

    @Test func siblingsNeverSeeEachOthersOverrides() async {
        let mismatches = await withTaskGroup(of: Int.self) { group in
            for index in 0..<200 {
                group.addTask {
                    await withScopedValues({ $0.requestID = "request-\(index)" }) {
                        await Task.yield()
                        return ScopedValues.current.requestID == "request-\(index)" ? 0 : 1
                    }
                }
            }
            return await group.reduce(0, +)
        }
        #expect(mismatches == 0)
        #expect(ScopedValues.current.requestID == nil)
    }

    @Test func optionalEntryWithoutDefaultReadsNil() {
        #expect(ScopedValues.current.retryLimit == nil)
        withScopedValues({ $0.retryLimit = 3 }) {
            #expect(ScopedValues.current.retryLimit == 3)
        }
    }

    @Test func existentialEntryIsSwappedForAMock() {
        #expect(ScopedValues.current.titles.title(id: 1) == "production 1")
        withScopedValues({ $0.titles = MockTitles(titles: [1: "Toy Story"]) }) {
            #expect(ScopedValues.current.titles.title(id: 1) == "Toy Story")
            #expect(ScopedValues.current.titles.title(id: 2) == nil)
        }
    }

    @Test func actionValuesAreCalledLikeFunctions() {
        #expect(ScopedValues.current.greet("Ada") == "Hello, Ada!")
        withScopedValues({ $0.greet = GreetAction(prefix: "Welcome back") }) {
            #expect(ScopedValues.current.greet("Ada") == "Welcome back, Ada!")
        }
    }

    @Test func defaultIsBuiltLazilyAndExactlyOnceUnderConcurrentFirstReads() async {
        // Only this test reads `lazyProbe`, so nothing has built it yet.
        #expect(LazyDefaultProbe.constructions.withLock { $0 } == 0)
        let identities = await withTaskGroup(of: ObjectIdentifier.self) { group in
            for _ in 0..<1_000 {
                group.addTask { ObjectIdentifier(ScopedValues.current.lazyProbe) }
            }
            return await Set(group.reduce(into: []) { $0.append($1) })
        }
        #expect(LazyDefaultProbe.constructions.withLock { $0 } == 1)
        #expect(identities.count == 1)
    }

    @Test(arguments: [1, 8, 64, 200])
    func manyOverriddenEntriesAreEachReadBack(count: Int) {
        var values = ScopedValues()
        for index in 0..<count { values.set(Entity(index: index)) }
        values[ManyKeys.Key<7>.self] = 7
        #expect(values.object(Entity.self)?.index == count - 1, "one object per type: the last set wins")
        #expect(values[ManyKeys.Key<7>.self] == 7)
        #expect(values[ManyKeys.Key<8>.self] == -1)
    }

    @Test func sixtyFourDistinctKeysKeepTheirOwnValues() {
        var values = ScopedValues()
        func set<let n: Int>(_ key: ManyKeys.Key<n>.Type) { values[key] = n * 10 }
        func get<let n: Int>(_ key: ManyKeys.Key<n>.Type) -> Int { values[key] }
        set(ManyKeys.Key<0>.self)
        set(ManyKeys.Key<1>.self)
        set(ManyKeys.Key<2>.self)
        set(ManyKeys.Key<63>.self)
        #expect(get(ManyKeys.Key<0>.self) == 0)
        #expect(get(ManyKeys.Key<1>.self) == 10)
        #expect(get(ManyKeys.Key<2>.self) == 20)
        #expect(get(ManyKeys.Key<63>.self) == 630)
        #expect(get(ManyKeys.Key<62>.self) == -1)
    }

    @Test func deeplyNestedScopesReadTheNearestOverride() {
        func nest(_ level: Int) -> [Int?] {
            guard level < 64 else { return [ScopedValues.current.retryLimit] }
            return withScopedValues({ if level % 2 == 0 { $0.retryLimit = level } }) {
                [ScopedValues.current.retryLimit] + nest(level + 1)
            }
        }
        let seen = nest(0)
        #expect(seen.count == 65)
        #expect(seen[0] == 0 && seen[1] == 0 && seen[2] == 2 && seen[63] == 62 && seen[64] == 62)
    }

    @Test func asyncOverrideIsSeenAcrossSuspensions() async {
        let seen = await withScopedValues({ $0.copyright = "© Async" }) {
            try? await Task.sleep(for: .milliseconds(1))
            return ScopedValues.current.copyright
        }
        #expect(seen == "© Async")
    }

    @Test func updateThatThrowsRunsNoOperation() {
        struct Refused: Error {}
        var ran = false
        #expect(throws: Refused.self) {
            try withScopedValues({ _ in throw Refused() }) { ran = true }
        }
        #expect(!ran)
    }
}

private struct Entity: Sendable {
    let index: Int
}
