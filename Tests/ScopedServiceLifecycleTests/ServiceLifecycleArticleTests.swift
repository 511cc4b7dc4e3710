import Logging
import Scoped
import ScopedServiceLifecycle
import ScopedTestSupport
import ServiceLifecycle
import Testing

// The snippet of ScopedServiceLifecycle.md, verbatim between the markers: it compiles and runs
// here, with a root that validates and an empty server group.

/// What the article's snippet throws when the root does not validate.
struct StartupError: Error {
    let problems: [ScopeValidationError.Problem]
    init(_ problems: [ScopeValidationError.Problem]) { self.problems = problems }
}

struct ServiceLifecycleArticleTests {
    private func serve(_ root: ScopeRoot, serverGroup: ServiceGroupConfiguration, logger: Logger) async throws {
        // SNIPPET-BEGIN
        try await root.withRunningServices(logger: logger) {
            let problems = await root.validate()
            guard problems.isEmpty else { throw StartupError(problems) }
            try await ServiceGroup(configuration: serverGroup).run()
        }
        // SNIPPET-END
    }

    @Test func aRootThatValidatesRunsTheGroupAndOneThatDoesNotThrowsFirst() async throws {
        let logger = Logger(label: "test")
        let none: [ServiceGroupConfiguration.ServiceConfiguration] = []
        let group = ServiceGroupConfiguration(services: none, logger: logger)
        try await serve(ScopeRoot { _ in }, serverGroup: group, logger: logger)
        enum MissingKey: ScopedServiceKey {
            static let lifetime = ScopedLifetime.app
            static func makeValue() async throws -> Int { throw CancellationError() }
        }
        await #expect(throws: StartupError.self) {
            try await serve(ScopeRoot(services: [MissingKey.self]) { _ in }, serverGroup: group, logger: logger)
        }
    }

    @Test func everySnippetOfTheArticleIsHere() throws {
        let article = try ArticleSnippets.inArticle(
            "Sources/ScopedServiceLifecycle/ScopedServiceLifecycle.docc/ScopedServiceLifecycle.md"
        )
        #expect(article == (try ArticleSnippets.marked()))
    }
}
