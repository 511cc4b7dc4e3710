import Scoped
import ScopedInstrumentation
import ScopedSQLite
import ScopedTestSupport
import Synchronization
import Testing

// The snippets of ObservingARunningService.md (Scoped's DocC catalog) and of `ScopeObserver`'s
// doc comment, verbatim between the markers.

// SNIPPET-BEGIN
struct BuildLog: ScopeObserver {
    let log: @Sendable (String) -> Void
    // Builds and closes only: no call for scopes or reads.
    var events: ScopeObserverEvents { .services }

    func build<Value>(
        _ service: any ScopedServiceKey.Type,
        _ operation: () async throws -> Value
    ) async throws -> Value {
        log("building \(service.name)")
        return try await operation()
    }
}

let root = ScopeRoot(observers: [BuildLog { print($0) }])
// SNIPPET-END

struct ObservingArticleTests {
    /// Compiled, not run: the root reports to the backends the process bootstrapped.
    private func installInstrumentation() -> ScopeRoot {
        // SNIPPET-BEGIN
        let root = ScopeRoot(services: [SQLiteDatabaseKey.self], observers: [ScopeInstrumentation.bootstrapped])
        // SNIPPET-END
        return root
    }

    @Test func theBuildLogIsToldEachConstructionItsReadsNestedInside() async throws {
        let lines = Mutex<[String]>([])
        let root = ScopeRoot(
            startingFrom: ScopedValues(),
            observers: [BuildLog { line in lines.withLock { $0.append(line) } }]
        ) { _ in }
        try await root.withScope {
            _ = try await ScopedValues.current.service(SessionAfterClockKey.self)
            _ = try await ScopedValues.current.service(SessionAfterClockKey.self)
        }
        await root.shutdown()
        #expect(lines.withLock { $0 } == ["building sessionAfterClock", "building clockForLog"])
    }

    @Test func everySnippetOfTheArticleIsHere() throws {
        let article = try ArticleSnippets.inArticle("Sources/Scoped/Scoped.docc/ObservingARunningService.md")
        // The article shows the installation first, the observer second: this file cannot, as
        // the observer is declared at the top level.
        #expect(article == (try ArticleSnippets.marked()).reversed())
    }
}

/// An app service for the build log to see built inside the session's build.
private enum ClockForLogKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.app
    static func makeValue() async throws -> Int { 1 }
}

/// A scope service that reads `ClockForLogKey` while it is built.
private enum SessionAfterClockKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.scope
    static func makeValue() async throws -> Int { try await ScopedValues.current.service(ClockForLogKey.self) + 1 }
}
