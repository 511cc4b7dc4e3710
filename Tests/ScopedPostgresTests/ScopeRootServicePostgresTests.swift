import Logging
import PostgresNIO
import Scoped
import ScopedPostgres
import ScopedServiceLifecycle
import ScopedTestSupport
import ServiceLifecycle
import Testing

/// The root's life as a service, with postgres-nio's real client as the app service that runs.
@Suite(postgresAvailable)
struct ScopeRootServicePostgresTests {
    @Test func theClientRunsBeforeValidationLeasesFromItAndNothingWarnsAtStart() async throws {
        let fixture = try await PostgresFixture()
        let capture = LogCapture()
        let configuration = try PostgresConfiguration(url: fixture.url, migrations: itemMigrations)
        let root = ScopeRoot(services: [PostgresClientKey.self, PostgresDatabaseKey.self, PostgresSessionKey.self]) {
            $0.postgresConfiguration = configuration
            $0.postgresLogger = capture.logger(label: "postgres", level: .warning)
        }
        let service = ScopeRootService(root: root, logger: Logger(label: "test"))
        let group = ServiceGroup(services: [service], logger: Logger(label: "test"))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            try await service.ready()
            _ = try await root.withScope {
                try await ScopedValues.current.postgresSession.execute("INSERT INTO items (name) VALUES (\("one"))")
            }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        #expect(try await fixture.itemCount() == 1)
        #expect(capture.lines.filter { $0.message.contains("hasn't been called yet") }.isEmpty, "\(capture.lines)")
    }
}
