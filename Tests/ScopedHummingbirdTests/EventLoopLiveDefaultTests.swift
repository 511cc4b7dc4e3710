import Foundation
import NIOCore
import NIOPosix
import Scoped
import ScopedTesting
import Synchronization
import Testing

/// How many times the live mailer was built: never, in a test process.
let liveMailersBuilt = Mutex(0)

protocol Mailer: Sendable { var name: String { get } }
struct SMTPMailer: Mailer {
    let name = "smtp"
    init() { liveMailersBuilt.withLock { $0 += 1 } }
}
struct RecordingMailer: Mailer { let name: String }

extension ScopedValues {
    @Entry(testValue: RecordingMailer(name: "stand-in")) var mailer: any Mailer = SMTPMailer()
}

/// A live-only entry read on a NIO event loop inside a `.scoped` test fails that test.
///
/// The test's scope does not reach the event loop: the failure names the entry, and the read gets
/// the stand-in. The failure belongs to the run, so it is shown in a process of its own: this test
/// bundle, running only the fixture.
struct EventLoopLiveDefaultTests {
    static let fixtureVariable = "SCOPED_EVENT_LOOP_READ_FIXTURE"

    @Test(
        .scoped(),
        .enabled(if: ProcessInfo.processInfo.environment[fixtureVariable] != nil, "run by the test below, alone")
    )
    func fixtureReadsALiveOnlyEntryOnAnEventLoop() async throws {
        let eventLoop = MultiThreadedEventLoopGroup.singleton.any()
        let read = try await eventLoop.submit { ScopedValues.current.mailer.name }.get()
        #expect(read == "stand-in", "the stand-in, never the live default")
        #expect(liveMailersBuilt.withLock { $0 } == 0)
    }

    @Test func aLiveOnlyEntryReadOnAnEventLoopFailsTheTestThatRanItNamingTheEntry() throws {
        let (status, output) = try Self.runAlone("fixtureReadsALiveOnlyEntryOnAnEventLoop")
        #expect(status != 0, "the run fails")
        // Attributed to the test, at its own line, with one issue: the read got the stand-in.
        #expect(
            output.contains(
                "Test fixtureReadsALiveOnlyEntryOnAnEventLoop() recorded an issue at EventLoopLiveDefaultTests.swift"
            ),
            "\(output)"
        )
        #expect(output.contains("'mailer' is live-only, and was read outside every scope"), "\(output)")
        #expect(output.contains("failed after") && output.contains("with 1 issue."), "\(output)")
    }

    /// The documented remedy reads the test's mock on the event loop, and records nothing.
    ///
    /// As ScopedHummingbird.md and TheLifeOfARequest.md show it: the scope captured in the test's
    /// task and bound again on the event loop.
    @Test(.scoped { $0.mailer = RecordingMailer(name: "mock") })
    func theRemedyReadsTheTestsMockOnTheEventLoop() async throws {
        let eventLoop = MultiThreadedEventLoopGroup.singleton.any()
        let values = ScopedValues.current
        let read = try await eventLoop.submit { withScopedValues(values) { ScopedValues.current.mailer.name } }.get()
        #expect(read == "mock")
    }

    /// Runs this test bundle with only `test`, the fixture enabled; its exit status and its
    /// output, colours removed.
    static func runAlone(_ test: String) throws -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = ["--testing-library", "swift-testing", "--filter", test]
        var environment = ProcessInfo.processInfo.environment
        environment[fixtureVariable] = "1"
        environment["NO_COLOR"] = "1"
        process.environment = environment
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let output = String(decoding: data, as: UTF8.self)
            .replacingOccurrences(of: "\u{1B}\\[[0-9;]*m", with: "", options: .regularExpression)
        return (process.terminationStatus, output)
    }
}
