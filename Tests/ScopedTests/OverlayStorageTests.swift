@testable import Scoped
import ScopedDiagnostics
import Testing

/// Many distinct keys, to fill a root with dozens of entries.
enum NumberedKey<Tag>: ScopedKey {
    static var defaultValue: Int { -1 }
}

enum K0 {}
enum K1 {}
enum K2 {}
enum K3 {}
enum K4 {}
enum K5 {}
enum K6 {}
enum K7 {}

/// 64 distinct key types: `NumberedKey<(A, B)>` for A, B in K0…K7.
private func forEachOf64Keys(_ body: (Int, any ScopedKeyWriter.Type) -> Void) {
    let tags: [any ScopedKeyWriter.Type] = [
        W<K0, K0>.self, W<K0, K1>.self, W<K0, K2>.self, W<K0, K3>.self, W<K0, K4>.self, W<K0, K5>.self, W<K0, K6>.self,
        W<K0, K7>.self, W<K1, K0>.self, W<K1, K1>.self, W<K1, K2>.self, W<K1, K3>.self, W<K1, K4>.self, W<K1, K5>.self,
        W<K1, K6>.self, W<K1, K7>.self, W<K2, K0>.self, W<K2, K1>.self, W<K2, K2>.self, W<K2, K3>.self, W<K2, K4>.self,
        W<K2, K5>.self, W<K2, K6>.self, W<K2, K7>.self, W<K3, K0>.self, W<K3, K1>.self, W<K3, K2>.self, W<K3, K3>.self,
        W<K3, K4>.self, W<K3, K5>.self, W<K3, K6>.self, W<K3, K7>.self, W<K4, K0>.self, W<K4, K1>.self, W<K4, K2>.self,
        W<K4, K3>.self, W<K4, K4>.self, W<K4, K5>.self, W<K4, K6>.self, W<K4, K7>.self, W<K5, K0>.self, W<K5, K1>.self,
        W<K5, K2>.self, W<K5, K3>.self, W<K5, K4>.self, W<K5, K5>.self, W<K5, K6>.self, W<K5, K7>.self, W<K6, K0>.self,
        W<K6, K1>.self, W<K6, K2>.self, W<K6, K3>.self, W<K6, K4>.self, W<K6, K5>.self, W<K6, K6>.self, W<K6, K7>.self,
        W<K7, K0>.self, W<K7, K1>.self, W<K7, K2>.self, W<K7, K3>.self, W<K7, K4>.self, W<K7, K5>.self, W<K7, K6>.self,
        W<K7, K7>.self,
    ]
    for (index, tag) in tags.enumerated() { body(index, tag) }
}

/// Writes and reads one of the 64 keys without naming its type at the call site.
protocol ScopedKeyWriter {
    static func write(_ value: Int, to values: inout ScopedValues)
    static func read(_ values: ScopedValues) -> Int
}

enum W<A, B>: ScopedKeyWriter {
    static func write(_ value: Int, to values: inout ScopedValues) { values[NumberedKey<(A, B)>.self] = value }
    static func read(_ values: ScopedValues) -> Int { values[NumberedKey<(A, B)>.self] }
}

extension ScopedValues {
    @Entry var layer: Int = 0
}

/// The storage behind scopes: an overlay of what a scope sets over the base it sees through.
///
/// Overlays flatten when they grow. These tests pin what must hold whatever the layout.
struct OverlayStorageTests {
    @Test func aRequestScopeOnARootWith64EntriesSeesThemAllAndOverridesOnlyItsOwn() async throws {
        let root = ScopeRoot { values in forEachOf64Keys { index, key in key.write(index, to: &values) } }
        try await root.withScope({ values in
            forEachOf64Keys { index, key in if index % 8 == 0 { key.write(1_000 + index, to: &values) } }
        }) {
            let values = ScopedValues.current
            forEachOf64Keys { index, key in
                #expect(key.read(values) == (index % 8 == 0 ? 1_000 + index : index))
            }
            #expect(values.describe().entries.filter { $0.name.hasPrefix("numberedKey") }.count == 64)
        }
        forEachOf64Keys { index, key in #expect(key.read(root.values) == index) }
    }

    @Test(arguments: [1, 2, 16, 17, 18, 64, 200])
    func overridingTheSameEntryAtEveryDepthReadsTheNearestAndRestoresEachOnTheWayOut(depth: Int) {
        func descend(_ level: Int) {
            guard level <= depth else { return }
            withScopedValues({ values in
                values.layer = level
                // Every third level also sets an entry of its own, so overlays grow and flatten.
                if level % 3 == 0 {
                    forEachOf64Keys { index, key in if index == level % 64 { key.write(level, to: &values) } }
                }
            }) {
                #expect(ScopedValues.current.layer == level)
                #expect(ScopedValues.current.depth == level)
                descend(level + 1)
                #expect(ScopedValues.current.layer == level, "after the child scope ended")
            }
        }
        descend(1)
        #expect(ScopedValues.current.layer == 0)
    }

    @Test func entriesSetAtEveryLevelOfA64DeepChainAreAllVisibleAtTheLeaf() {
        var seen: [Int] = []
        func descend(_ level: Int) {
            guard level < 64 else {
                let values = ScopedValues.current
                forEachOf64Keys { _, key in seen.append(key.read(values)) }
                return
            }
            withScopedValues({ values in
                forEachOf64Keys { index, key in if index == level { key.write(level * 10, to: &values) } }
            }) {
                descend(level + 1)
            }
        }
        descend(0)
        #expect(seen == (0..<64).map { $0 * 10 })
    }

    @Test func childTasksReadTheirScopeWhileSiblingScopesOpenConcurrently() async {
        let mismatches = await withTaskGroup(of: Int.self) { group in
            for task in 0..<200 {
                group.addTask {
                    await withScopedValues({ $0.layer = task }) {
                        await withTaskGroup(of: Int.self) { children in
                            for child in 0..<4 {
                                children.addTask {
                                    var wrong = 0
                                    for round in 0..<20 {
                                        // Siblings open and close scopes of their own meanwhile.
                                        let nested = withScopedValues({ $0.layer = -(task * 100 + child * 20 + round) })
                                        {
                                            ScopedValues.current.layer
                                        }
                                        if nested != -(task * 100 + child * 20 + round) { wrong += 1 }
                                        if ScopedValues.current.layer != task { wrong += 1 }
                                        await Task.yield()
                                    }
                                    return wrong
                                }
                            }
                            return await children.reduce(0, +)
                        }
                    }
                }
            }
            return await group.reduce(0, +)
        }
        #expect(mismatches == 0)
    }

    @Test func describingAFlattenedScopeListsEachEntryOnceWithItsNearestOrigin() {
        func descend(_ level: Int, _ body: () -> Void) {
            guard level <= 40 else { return body() }
            withScopedValues({ $0.layer = level }) { descend(level + 1, body) }
        }
        descend(1) {
            let layers = ScopedValues.current.describe().entries.filter { $0.name == "layer" }
            #expect(layers.count == 1)
            #expect(layers.first?.origin == .override(depth: 40))
        }
    }
}
