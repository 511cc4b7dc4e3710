@testable import Scoped
import ScopedDiagnostics
import ScopedTestSupport
import Testing

/// A check several modules contribute, as an application's health checks are.
protocol Check: Sendable {
    var label: String { get }
}

struct NamedCheck: Check {
    let label: String
}

extension ScopedValues {
    @Entry var checks: Contributions<any Check> = Contributions()
}

/// What one module of an application contributes at the root, knowing no other module.
private enum DatabaseModule {
    static func configure(_ values: inout ScopedValues) {
        values.contribute(AppClockKey.self, to: \.checks) { NamedCheck(label: $0.name) }
    }
}

private enum SettingsModule {
    static func configure(_ values: inout ScopedValues) {
        values.contribute(NamedCheck(label: "settings"), to: \.checks)
        values.contribute(NamedCheck(label: "listener"), to: \.checks)
    }
}

/// Entries that many places contribute to.
struct ContributionsTests {
    private func makeRoot() -> (ScopeRoot, LifetimeProbe) {
        let probe = LifetimeProbe()
        let root = ScopeRoot(services: [AppClockKey.self, SlowAppKey.self]) {
            $0.probe = probe
            DatabaseModule.configure(&$0)
            SettingsModule.configure(&$0)
        }
        return (root, probe)
    }

    @Test func contributionsOfTheRootComeInTheOrderMadeThenEachScopesOwn() async throws {
        let (root, _) = makeRoot()
        let (outer, inner, sibling) = try await root.withScope({
            $0.contribute(NamedCheck(label: "request"), to: \.checks)
        }) {
            let outer = try await ScopedValues.current.checks.elements().map(\.label)
            let inner = try await withScopedValues({ $0.contribute(NamedCheck(label: "job"), to: \.checks) }) {
                try await ScopedValues.current.checks.elements().map(\.label)
            }
            let sibling = try await root.withScope { try await ScopedValues.current.checks.elements().map(\.label) }
            return (outer, inner, sibling)
        }
        #expect(outer == [AppClockKey.name, "settings", "listener", "request"])
        #expect(inner == [AppClockKey.name, "settings", "listener", "request", "job"])
        #expect(sibling == [AppClockKey.name, "settings", "listener"])  // another scope's additions stay its own
        await root.shutdown()
    }

    @Test func eachContributionSaysWhatItIsAndWhereItWasMade() async throws {
        let (root, _) = makeRoot()
        let contributions = try await root.withScope({ $0.contribute(NamedCheck(label: "request"), to: \.checks) }) {
            ScopedValues.current.checks.contributions
        }
        #expect(
            contributions.map(\.name) == [AppClockKey.name]
                + Array(repeating: String(reflecting: NamedCheck.self), count: 3)
        )
        #expect(contributions.map(\.isService) == [true, false, false, false])
        #expect(contributions.map(\.depth) == [0, 0, 0, 1])
        #expect(contributions.allSatisfy { $0.fileID == "ScopedTests/ContributionsTests.swift" })
        #expect(contributions.map(\.line) == [22, 28, 29, contributions[3].line])
        #expect(contributions[3].line > 29)
        await root.shutdown()
    }

    @Test func aContributedServiceIsBuiltOnceAndClosedWithTheRootInReverseOrder() async throws {
        let (root, probe) = makeRoot()
        try await withThrowingTaskGroup { group in
            for _ in 0..<20 {
                group.addTask {
                    try await root.withScope {
                        _ = try await ScopedValues.current.checks.elements()
                        _ = try await ScopedValues.current.service(SlowAppKey.self)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(probe.builds(of: AppClockKey.name) == 1)
        await root.shutdown()
        // Built first, closed last.
        #expect(
            probe.events.suffix(2) == ["close \(SlowAppKey.name) success", "close \(AppClockKey.name) success"]
        )
    }

    @Test func describeListsEachContribution() async throws {
        let (root, _) = makeRoot()
        let description = root.values.describe()
        let entry = try #require(description.entries.first { $0.name == "checks" })
        #expect(
            entry.contributions == [
                "service \(AppClockKey.name) from ScopedTests/ContributionsTests.swift:22 at depth 0",
                "\(String(reflecting: NamedCheck.self)) from ScopedTests/ContributionsTests.swift:28 at depth 0",
                "\(String(reflecting: NamedCheck.self)) from ScopedTests/ContributionsTests.swift:29 at depth 0",
            ]
        )
        #expect(entry.description.contains("+ service \(AppClockKey.name) from"))
        // Any other entry lists none.
        #expect(description.entries.filter { $0.name != "checks" }.allSatisfy { $0.contributions == nil })
        await root.shutdown()
    }
}
