import ScopedReload
import Synchronization
import Testing

// This file imports nothing of Scoped but `ScopedReload`: it compiles only while that one import
// gives a file the core, as the README's Install section promises.

private enum PoolSizeKey: ScopedKey {
    static let defaultValue = 4
}

private enum GreetingKey: ScopedKey {
    static let defaultValue = "hello"
}

private let builds = Mutex<[String]>([])

/// An app service that reads one entry: carried over while that entry holds the same value.
private enum PoolKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.app
    static func makeValue() async throws -> Int {
        let size = ScopedValues.current[PoolSizeKey.self]
        builds.withLock { $0.append("pool \(size)") }
        return size
    }
}

/// An app service that reads the other.
private enum GreeterKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.app
    static func makeValue() async throws -> String {
        let greeting = ScopedValues.current[GreetingKey.self]
        builds.withLock { $0.append("greeter \(greeting)") }
        return greeting
    }
}

private func makeRoot(greeting: String, recorded: Bool = true) -> ScopeRoot {
    ScopeRoot(services: [PoolKey.self, GreeterKey.self], observers: recorded ? [ReloadRecorder()] : []) {
        $0[GreetingKey.self] = greeting
    }
}

@Suite(.serialized) struct OneImportTests {
    @Test func importingReloadAloneGivesTheCoreAndAReloadCarriesOverWhatDidNotChange() async throws {
        builds.withLock { $0 = [] }
        let reloadable = ReloadableScopeRoot(makeRoot(greeting: "hello"))
        #expect(await reloadable.current.validate().isEmpty)

        let reload = try await reloadable.reload(to: makeRoot(greeting: "bonjour"))

        #expect(reload.generation == 2)
        #expect(reload.carriedOver == [PoolKey.name])
        #expect(reload.rebuilt == [.init(service: GreeterKey.name, reason: "\(GreetingKey.name) changed")])
        // Built once each on the first root; only the greeter again on the second.
        #expect(builds.withLock { $0 } == ["pool 4", "greeter hello", "greeter bonjour"])
        let greeting = try await reloadable.withScope { try await ScopedValues.current.service(GreeterKey.self) }
        #expect(greeting == "bonjour")
        await reload.previous.shutdown()
        await reloadable.current.shutdown()
    }

    @Test func aRootWithoutTheRecorderReloadsByRebuildingEverything() async throws {
        builds.withLock { $0 = [] }
        let reloadable = ReloadableScopeRoot(makeRoot(greeting: "hello", recorded: false))
        #expect(await reloadable.current.validate().isEmpty)

        let reload = try await reloadable.reload(to: makeRoot(greeting: "hello"))

        #expect(reload.carriedOver.isEmpty)
        #expect(reload.rebuilt.map(\.service) == [PoolKey.name, GreeterKey.name])
        #expect(reload.rebuilt.allSatisfy { $0.reason.contains("ReloadRecorder") })
        await reload.previous.shutdown()
        await reloadable.current.shutdown()
    }
}
