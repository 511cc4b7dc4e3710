import Logging
import Scoped
import ScopedInstrumentation
import ScopedReload
import ScopedSQLite
import ScopedTestSupport
import Testing

@testable import CatalogApp

// The snippets of ScopedReload's landing article, verbatim between the markers: they compile
// here, and run on the example's configuration.

struct ReloadArticleTests {
    // SNIPPET-BEGIN
    func makeRoot(_ configuration: AppConfiguration) -> ScopeRoot {
        ScopeRoot(services: [SQLiteDatabaseKey.self], observers: [ReloadRecorder()]) { values in
            values.sqliteConfiguration = configuration.database
        }
    }
    // SNIPPET-END

    @Test func theArticlesRootCarriesTheDatabaseOverUntilItsConfigurationChanges() async throws {
        let folder = try TemporaryFolder()
        let configuration = try await loadConfiguration(.development, folder: folder)
        var louder = configuration
        louder.logLevel = .debug
        var moreReaders = louder
        moreReaders.database.readers += 1
        let reloadable = ReloadableScopeRoot(makeRoot(configuration))
        #expect(await reloadable.current.validate().isEmpty)
        let first = try await reloadable.current.withScope { try await ScopedValues.current.sqliteDatabase }

        let kept = try await reloadable.reload(to: makeRoot(louder))
        let same = try await reloadable.current.withScope { try await ScopedValues.current.sqliteDatabase }
        let rebuilt = try await reloadable.reload(to: makeRoot(moreReaders))

        #expect(kept.summary == "carried over: sqliteDatabase")
        #expect(same === first)
        #expect(rebuilt.summary == "rebuilt: sqliteDatabase (sqliteConfiguration.readers changed)")
        await kept.previous.shutdown()
        await rebuilt.previous.shutdown()
        await reloadable.current.shutdown()
    }

    private func follow(
        _ configurations: AsyncStream<AppConfiguration>,
        from configuration: AppConfiguration,
        logger: Logger
    ) async throws -> ReloadableScopeRoot {
        // The roots of the example server: its database is an app service, built by validation.
        func makeRoot(_ configuration: AppConfiguration) throws -> ScopeRoot {
            try CatalogServer.makeRoot(configuration, base: ScopedValues(), instrumentation: ScopeInstrumentation())
        }
        // SNIPPET-BEGIN
        let reloadable = ReloadableScopeRoot(try makeRoot(configuration))
        try await reloadable.follow(configurations, makeRoot: makeRoot, shutdownTimeout: .seconds(10)) { outcome in
            switch outcome {
            case .success(let reload): logger.notice("Reloaded, generation \(reload.generation): \(reload.summary)")
            case .failure(let error): logger.error("Reload rejected; the current configuration keeps serving: \(error)")
            }
        }
        // SNIPPET-END
        return reloadable
    }

    @Test func aReloadRebuildsTheDatabaseOnlyWhenItsConfigurationChanged() async throws {
        let folder = try TemporaryFolder()
        var configuration = try await loadConfiguration(.development, folder: folder)
        configuration.metricsEnabled = false
        var moreReaders = configuration
        moreReaders.database.readers += 1
        var louder = moreReaders
        louder.logLevel = .debug
        var invalid = louder
        invalid.database.readers = 0
        let (configurations, continuation) = AsyncStream.makeStream(of: AppConfiguration.self)
        let capture = LogCapture()
        let following = Task {
            try await follow(configurations, from: configuration, logger: capture.logger(label: "reload"))
        }
        for next in [moreReaders, louder, invalid] { continuation.yield(next) }
        continuation.finish()
        let reloadable = try await following.value
        let messages = capture.lines.map(\.message)
        #expect(reloadable.generation == 3)
        #expect(messages.count == 3)
        #expect(messages.first == "Reloaded, generation 2: the replaced root had built no app service")
        #expect(messages.dropFirst().first == "Reloaded, generation 3: carried over: sqliteDatabase")
        #expect(messages.last?.hasPrefix("Reload rejected; the current configuration keeps serving:") == true)
        #expect(messages.last?.contains("readers") == true, "\(messages)")
        await reloadable.current.shutdown()
    }

    @Test func everySnippetOfTheArticleIsHere() throws {
        #expect(
            try ArticleSnippets.inArticle("Sources/ScopedReload/ScopedReload.docc/ScopedReload.md")
                == ArticleSnippets.marked()
        )
    }
}
