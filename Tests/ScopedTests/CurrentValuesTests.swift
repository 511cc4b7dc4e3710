import Foundation
import Testing

@testable import Scoped

/// `ScopedValues.current` and `@Scoped` read the task-local binding in place, through the
/// runtime's own entry point; these check that they see what `TaskLocal.get()` sees.
struct CurrentValuesTests {
    private struct Reader: Sendable {
        @Scoped(\.requestID) var requestID
    }

    /// What each way of reading sees: `TaskLocal.get()`, `current`, and `@Scoped`.
    private static func seen() -> [String?] {
        let bound = ScopedValues(node: ScopedValues.taskLocalNode.get())
        return [bound.requestID, ScopedValues.current.requestID, Reader().requestID]
    }

    @Test func scopedValuesAreTheTaskLocalsNodeAndNothingElse() {
        #expect(MemoryLayout<ScopedValues>.size == MemoryLayout<ScopeNode>.size)
        #expect(MemoryLayout<ScopedValues>.stride == MemoryLayout<UnsafeRawPointer>.stride)
        withScopedValues({ $0.requestID = "same" }) {
            #expect(ScopedValues.current.node.buffer === ScopedValues.taskLocalNode.get().buffer)
        }
    }

    @Test func everyWayOfReadingSeesTheSameInTasks() async {
        #expect(Self.seen() == [nil, nil, nil])
        await withScopedValues({ $0.requestID = "outer" }) {
            #expect(Self.seen() == ["outer", "outer", "outer"])
            async let child = Self.seen()
            #expect(await child == ["outer", "outer", "outer"])
            withScopedValues({ $0.requestID = "inner" }) {
                #expect(Self.seen() == ["inner", "inner", "inner"])
            }
            #expect(Self.seen() == ["outer", "outer", "outer"])
            #expect(await Task.detached { Self.seen() }.value == [nil, nil, nil])
        }
    }

    @Test func anUnstructuredTaskKeepsReadingItsCopyAfterTheBindingEnds() async {
        let (started, start) = AsyncStream.makeStream(of: Void.self)
        let task = withScopedValues({ $0.requestID = "escaped" }) {
            Task {
                for await _ in started { break }
                // The scope that bound the value has returned and dropped its node by now.
                var reads: [[String?]] = []
                for _ in 0..<3 {
                    reads.append(Self.seen())
                    await Task.yield()
                }
                return reads
            }
        }
        #expect(Self.seen() == [nil, nil, nil])
        start.yield()
        #expect(await task.value == Array(repeating: ["escaped", "escaped", "escaped"], count: 3))
    }

    @Test func aThreadOutsideAnyTaskReadsItsOwnBindings() async {
        let seen = await withCheckedContinuation { (continuation: CheckedContinuation<[[String?]], Never>) in
            let thread = Thread {
                var seen = [Self.seen()]
                withScopedValues({ $0.requestID = "thread" }) {
                    seen.append(Self.seen())
                }
                seen.append(Self.seen())
                continuation.resume(returning: seen)
            }
            thread.start()
        }
        #expect(seen == [[nil, nil, nil], ["thread", "thread", "thread"], [nil, nil, nil]])
    }

    @Test func concurrentTasksEachReadTheirOwnScope() async {
        let mismatches = await withTaskGroup(of: Int.self) { group in
            for task in 0..<8 {
                group.addTask {
                    var mismatches = 0
                    for round in 0..<2_000 {
                        let id = "\(task)-\(round)"
                        withScopedValues({ $0.requestID = id }) {
                            if Self.seen() != [id, id, id] { mismatches += 1 }
                        }
                    }
                    return mismatches
                }
            }
            return await group.reduce(0, +)
        }
        #expect(mismatches == 0)
    }
}
