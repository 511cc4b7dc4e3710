import Scoped
public import Testing

/// Runs `body` and records an issue unless the application it serves opened at least `minimum`
/// request scopes meanwhile: scopes of roots built in the test's scope, the test's own left out.
///
/// Hummingbird's `.router` and `.live` test clients run the handlers inside the test's task, so a
/// `.scoped` test's overrides reach them even when the application opens no request scope at all
/// (its `RequestScopeMiddleware` left out). Wrap the requests in this to prove the wiring:
///
/// ```swift
/// @Test(.scoped { $0.noteRepository = MemoryNoteRepository(stored: ["Buy milk"]) })
/// func everyRequestRunsInARequestScope() async throws {
///     let app = buildApplication(databasePath: "notes.sqlite", logger: Logger(label: "test"))
///     try await app.test(.router) { client in
///         try await expectRequestScopes {
///             let response = try await client.execute(uri: "/notes", method: .get)
///             #expect(String(buffer: response.body) == "Buy milk")
///         }
///     }
/// }
/// ```
///
/// Work handed off (`handOff`) is not counted: it opens scopes of its own. Called outside a test
/// scope (`.scoped`, `withTestScope`), it records that instead.
///
/// - Parameters:
///   - minimum: how many request scopes the application must open while `body` runs.
///   - sourceLocation: where the issue is recorded.
///   - body: the requests.
/// - Returns: what `body` returns.
/// - Throws: what `body` throws.
nonisolated(nonsending) public func expectRequestScopes<R>(
    atLeast minimum: Int = 1,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> R
) async rethrows -> R {
    guard let checks = TestRoot.current?.observers(TestChecks.self).first else {
        Issue.record(
            "expectRequestScopes runs in a test scope: give the test the .scoped trait, or call withTestScope",
            sourceLocation: sourceLocation
        )
        return try await body()
    }
    let before = checks.applicationScopesOpened
    let result = try await body()
    let opened = checks.applicationScopesOpened - before
    if opened < minimum {
        let scopes = opened == 1 ? "1 request scope" : "\(opened) request scopes"
        Issue.record(
            Comment(
                rawValue: "The application opened \(scopes) where at least \(minimum) "
                    + "\(minimum == 1 ? "was" : "were") expected: is its request-scope middleware installed?"
            ),
            sourceLocation: sourceLocation
        )
    }
    return result
}
