import Scoped

/// Whether a scope's cost grows with what the application root holds.
///
/// The same scopes are opened on a root with 2 entries and on one with 64. The mock is built
/// once, so the allocation counts are the library's own.
func rootSizeWorkloads() -> [Workload] {
    let mock = MockBenchRepository()
    let scoped = ScopedController()
    let smallRoot = ScopeRoot {
        $0.benchRepository = LiveBenchRepository()
        $0.bench0 = 1
    }
    let largeRoot = ScopeRoot { values in
        values.benchRepository = LiveBenchRepository()
        for index in 0..<63 { overrideOne(&values, index) }
    }

    func requestScope(_ root: ScopeRoot) -> (Int) async -> Int {
        { n in
            var sum = 0
            for _ in 0..<n {
                sum &+= (try? await root.withScope({ $0.benchRequestID = "request" }) { scoped.count() }) ?? 0
            }
            return sum
        }
    }

    func overrideInside(_ root: ScopeRoot) -> (Int) async -> Int {
        { n in
            (try? await root.withScope {
                var sum = 0
                for _ in 0..<n {
                    sum &+= withScopedValues({
                        $0.benchRepository = mock
                        $0.benchRequestID = "request"
                    }) { scoped.count() }
                }
                return sum
            }) ?? 0
        }
    }

    return [
        Workload(
            group: "root size",
            name: "request scope open + close + 1 read, 2 entries on the root",
            run: requestScope(smallRoot)
        ),
        Workload(
            group: "root size",
            name: "request scope open + close + 1 read, 64 entries on the root",
            run: requestScope(largeRoot)
        ),
        Workload(
            group: "root size",
            name: "withScopedValues: 2 overrides + 1 read, 2 entries on the root",
            run: overrideInside(smallRoot)
        ),
        Workload(
            group: "root size",
            name: "withScopedValues: 2 overrides + 1 read, 64 entries on the root",
            run: overrideInside(largeRoot)
        ),
    ]
}
