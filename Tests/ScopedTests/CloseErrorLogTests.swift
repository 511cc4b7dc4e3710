import Foundation
import Logging
@testable import Scoped
import Testing

/// Where a close failure goes when the root was given no `onCloseError`: through swift-log, so it
/// lands where the server's other logs go.
struct CloseErrorLogTests {
    /// Without a bootstrapped logging system, swift-log's default writes it to standard error.
    @Test func aCloseFailureNobodyHandlesIsLoggedToStandardErrorByDefault() async throws {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            await Self.failAScopeWhoseCloseFails()
        }
        let logged = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(logged.contains("error Scoped"))
        #expect(logged.contains("scope.outcome=failure"))
        #expect(logged.contains("\(FailingCloseKey.name): CloseFailure(name: \"\(FailingCloseKey.name)\")"))
    }

    /// With one, it goes where the application sent its logs (here standard output), and nowhere else.
    @Test func aCloseFailureNobodyHandlesGoesWhereTheApplicationsLogsGo() async throws {
        let result = await #expect(
            processExitsWith: .success,
            observing: [\.standardOutputContent, \.standardErrorContent]
        ) {
            LoggingSystem.bootstrap { StreamLogHandler.standardOutput(label: $0) }
            await Self.failAScopeWhoseCloseFails()
        }
        let output = String(decoding: result?.standardOutputContent ?? [], as: UTF8.self)
        let errors = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("error Scoped") && output.contains(FailingCloseKey.name))
        #expect(!errors.contains(FailingCloseKey.name))
    }

    /// A scope whose operation throws, so its service's failing close cannot be thrown and goes
    /// to the root's handler.
    private static func failAScopeWhoseCloseFails() async {
        struct HandlerFailure: Error {}
        let root = ScopeRoot()
        _ = try? await root.withScope {
            _ = try await ScopedValues.current.service(FailingCloseKey.self)
            throw HandlerFailure()
        }
        await root.shutdown()
    }
}
