@testable import Scoped
import Synchronization
import Testing

/// Outside every application root (and every test scope) there is nothing to build a service
/// in, to open a scope on or to wait for handed-off work: each says so with a named error.
struct OutsideRootTests {
    @Test func anAppServiceReadOutsideEveryRootThrowsNamingIt() async {
        await #expect(throws: ScopedError.outsideRoot(entry: AppClockKey.name)) {
            try await ScopedValues.current.service(AppClockKey.self)
        }
    }

    @Test func aScopeServiceReadOutsideEveryRootThrowsNamingIt() async {
        await #expect(throws: ScopedError.outsideRoot(entry: SessionKey.name)) {
            try await ScopedValues.current.service(SessionKey.self)
        }
    }

    @Test func withScopeOutsideEveryRootThrowsAndRunsNothing() async {
        let ran = Atomic<Bool>(false)
        await #expect(throws: ScopedError.outsideRoot(entry: nil)) {
            try await withScope { ran.store(true, ordering: .relaxed) }
        }
        let didRun = ran.load(ordering: .relaxed)
        #expect(!didRun)
    }

    @Test func workHandedOffOutsideEveryRootDoesNotRunAndItsValueSaysWhy() async {
        let ran = Atomic<Bool>(false)
        let task = handOff(timeout: .seconds(1)) { ran.store(true, ordering: .relaxed) }
        await #expect(throws: ScopedError.outsideRoot(entry: nil)) { try await task.value }
        let didRun = ran.load(ordering: .relaxed)
        #expect(!didRun)
    }

    @Test func theErrorSaysHowToFixIt() {
        let message = ScopedError.outsideRoot(entry: "clock").description
        #expect(message.hasPrefix("clock was read outside any application root."))
        #expect(message.contains("`root.withScope { … }`") && message.contains("`.scoped` trait"))
    }

    /// Inside a root, `withScope` opens a child of the current scope as before.
    @Test func withScopeInsideARootOpensAChildOfTheCurrentScope() async throws {
        let root = ScopeRoot()
        let counts = try await root.withScope {
            try await withScope { root.openScopeCount }
        }
        #expect(counts == 2)
        #expect(root.openScopeCount == 0)
        await root.shutdown()
    }
}
