import Foundation
import Testing

/// Every thread, timer and task of the library has an owner: once the application root has shut
/// down (which closes its databases and its tenants'), nothing of the library is left running.
///
/// Checked in a process of its own, `LibraryOwnershipProbe`, built beside the tests: the deadline
/// watchdog is the process's, and the other tests running beside this one keep its timer busy.
struct LibraryOwnershipTests {
    /// Runs the probe with `arguments`; returns what it reports left.
    private func probe(_ arguments: [String] = []) throws -> [String] {
        let binary = URL(filePath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            .deletingLastPathComponent().appending(path: "LibraryOwnershipProbe")
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(process.terminationStatus == 0)
        #expect(lines.last == "done", "the probe did not finish: \(lines)")
        return lines.filter { $0.hasPrefix("left: ") }
    }

    @Test func afterTheRootShutsDownNoThreadTimerOrTaskOfTheLibraryIsLeft() throws {
        #expect(try probe() == [])
    }

    @Test func aRootNeverShutDownLeavesItsDatabasesThreadsRunningAndTheProbeSaysSo() throws {
        let left = try probe(["--no-shutdown"])
        #expect(left.contains { $0.hasPrefix("left: the thread ") })
        #expect(left.contains("left: the application root, still referenced"))
    }
}
