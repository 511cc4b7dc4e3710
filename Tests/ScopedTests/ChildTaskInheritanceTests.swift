@testable import Scoped
import Testing

struct ChildTaskInheritanceTests {
    @Test func asyncLetInheritsTheScope() async {
        await withScopedValues({ $0.requestID = "async-let" }) {
            async let child = ScopedValues.current.requestID
            #expect(await child == "async-let")
        }
    }

    @Test func taskGroupChildrenInheritTheScope() async {
        await withScopedValues({ $0.requestID = "group" }) {
            let seen = await withTaskGroup(of: String?.self) { group in
                for _ in 0..<10 { group.addTask { ScopedValues.current.requestID } }
                return await group.reduce(into: [String?]()) { $0.append($1) }
            }
            #expect(seen == Array(repeating: "group", count: 10))
        }
    }

    @Test func unstructuredTaskInheritsTheScope() async {
        await withScopedValues({ $0.requestID = "task" }) {
            let seen = await Task { ScopedValues.current.requestID }.value
            #expect(seen == "task")
        }
    }

    @Test func detachedTaskDoesNotInheritTheScope() async {
        await withScopedValues({ $0.requestID = "detached" }) {
            let seen = await Task.detached { ScopedValues.current.requestID }.value
            #expect(seen == nil)
        }
    }

    @Test func capturedValuesCarryTheScopeIntoDetachedWork() async {
        await withScopedValues({ $0.requestID = "carried" }) {
            let values = ScopedValues.current
            let seen =
                await Task.detached {
                    await withScopedValues(values) {
                        await Task.yield()
                        return ScopedValues.current.requestID
                    }
                }
                .value
            #expect(seen == "carried")
        }
    }

    @Test func synchronousBindingOfCapturedValues() {
        let values = withScopedValues({ $0.copyright = "© Captured" }) { ScopedValues.current }
        #expect(ScopedValues.current.copyright == "© Default")
        #expect(withScopedValues(values) { ScopedValues.current.copyright } == "© Captured")
    }
}
