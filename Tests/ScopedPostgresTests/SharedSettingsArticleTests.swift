import Configuration
import Foundation
import Logging
import Scoped
import ScopedReload
import ScopedPostgres
import ScopedTestSupport
import ServiceLifecycle
import Testing

// The snippets of SharedSettings.md (ScopedPostgres's DocC catalog) and of
// PostgresSettingsProvider's doc comment, verbatim between the markers: they run here against a
// real database, and `everySnippetOfTheArticleIsHere` checks that the article shows exactly these.

@Suite(postgresAvailable)
struct SharedSettingsArticleTests {
    @Test func theProviderReadsTheVersionCommittedBetweenTheEnvironmentAndTheFile() async throws {
        let fixture = try await PostgresFixture()
        let postgres = try PostgresConfiguration(url: fixture.url)
        let logger = Logger(label: "settings")
        let profileFile = InMemoryProvider(values: ["log.level": "info", "catalog.repository": "sqlite"])
        // The keys must be registered before an operator can set them: the first load does it.
        try await PostgresSettingsProvider(configuration: postgres, keys: ["log.level": .string], logger: logger).load()
        try await fixture.server.psql("SELECT scoped_set_setting('log.level', '\"debug\"')", database: fixture.database)

        // SNIPPET-BEGIN
        let settings = PostgresSettingsProvider(
            configuration: postgres,
            keys: ["log.level": .string, "catalog.repository": .string],
            logger: logger
        )
        try await settings.load()  // the current version, before the first root is made
        let reader = ConfigReader(providers: [EnvironmentVariablesProvider(), settings, profileFile])
        // SNIPPET-END

        #expect(reader.string(forKey: "log.level") == "debug")
        #expect(reader.string(forKey: "catalog.repository") == "sqlite")
        #expect(settings.status.version == 1)
    }

    @Test func aRootFollowsEachVersionAsItIsCommitted() async throws {
        let fixture = try await PostgresFixture()
        let postgres = try PostgresConfiguration(url: fixture.url)
        let logger = Logger(label: "settings")
        let settings = PostgresSettingsProvider(
            configuration: postgres,
            keys: ["greeting": .string],
            pollInterval: .seconds(1),
            logger: logger
        )
        try await settings.load()
        let environment = InMemoryProvider(values: [:])
        let profileFile = InMemoryProvider(values: ["greeting": "hello"])
        func makeRoot(_ reader: ConfigReader) throws -> ScopeRoot {
            let greeting = reader.string(forKey: "greeting", default: "hello")
            return ScopeRoot { $0.greeting = greeting }
        }
        let reloadable = ReloadableScopeRoot(
            try makeRoot(ConfigReader(providers: [environment, settings.currentSnapshot, profileFile]))
        )
        let following = Task {
            try await withThrowingDiscardingTaskGroup { group in
                group.addTask { try await settings.run() }
                // SNIPPET-BEGIN
                try await settings.watchSnapshot { versions in
                    try await reloadable.follow(
                        versions.dropFirst(),  // the first is the version the root was made from
                        makeRoot: { _ in
                            // One version for the whole read: the provider may read a newer one meanwhile.
                            try makeRoot(ConfigReader(providers: [environment, settings.currentSnapshot, profileFile]))
                        },
                        shutdownTimeout: .seconds(10)
                    ) { outcome in
                        switch outcome {
                        case .success(let reload): logger.notice("Settings applied: generation \(reload.generation)")
                        case .failure(let error): logger.error("Settings rejected: \(error)")
                        }
                    }
                }
                // SNIPPET-END
            }
        }
        defer { following.cancel() }
        #expect(await eventually { settings.status.isListening })
        try await fixture.server.psql(
            "SELECT scoped_set_setting('greeting', '\"bonjour\"')",
            database: fixture.database
        )
        #expect(await eventually { reloadable.generation == 2 })
        #expect(try await reloadable.withScope { ScopedValues.current.greeting } == "bonjour")
    }

    @Test func everySnippetOfTheArticleIsHere() throws {
        let article = try ArticleSnippets.inArticle("Sources/ScopedPostgres/ScopedPostgres.docc/SharedSettings.md")
        // The tenants' snippet runs in PostgresTenantRegistryTests, beside the registry's doc comment.
        let tenants = try ArticleSnippets.marked(in: Self.registryTests)
        #expect(article == (try ArticleSnippets.marked()).prefix(2) + tenants)
    }

    /// The file whose marked snippet the article shows for the tenants.
    static let registryTests = URL(filePath: #filePath).deletingLastPathComponent()
        .appending(path: "PostgresTenantRegistryTests.swift").path
}

extension ScopedValues {
    /// What the article's root is made with.
    @Entry var greeting: String = "hello"
}
