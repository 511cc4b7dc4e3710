import Foundation
import ScopedTestSupport
import Testing

/// The `ExampleServer` binary, built beside the tests, run as `swift run ExampleServer` runs it:
/// in the package's folder, so that it reads `Config/`, with the process's own bootstrap of
/// logging, tracing and metrics, which a test cannot do twice in its own process.
///
/// It listens on a port the system chooses, on 127.0.0.1, and is killed when the test ends
/// without stopping it.
final class ExampleServerProcess: Sendable {
    private let process: Process
    private let output = Recorder<String>()

    /// Starts the server with `environment`, its log on a pipe.
    init(environment: [String: String]) throws {
        let binary = URL(filePath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            .deletingLastPathComponent().appending(path: "ExampleServer")
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            throw ProcessError("\(binary.path) is not built: `swift build` builds it beside the tests")
        }
        process = Process()
        process.executableURL = binary
        process.currentDirectoryURL = URL(filePath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        // Nothing of the test's own environment but the essentials: a developer's `CONFIG_FILE`
        // or `OTEL_*` variable must not change what the test starts.
        let inherited = ProcessInfo.processInfo.environment.filter { ["PATH", "HOME", "TMPDIR"].contains($0.key) }
        process.environment = inherited.merging(["HTTP_PORT": "0", "LOG_LEVEL": "notice"]) { $1 }
            .merging(environment) { $1 }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        let output = output
        pipe.fileHandleForReading.readabilityHandler = { handle in
            output.record(String(decoding: handle.availableData, as: UTF8.self))
        }
        try process.run()
    }

    deinit {
        if process.isRunning { process.terminate() }
    }

    /// What the server logged so far.
    var log: String { output.all.joined() }

    /// The port the server listens on, from its `Listening on` line.
    ///
    /// - Throws: when the server exits, or does not listen within 60 seconds.
    func port() async throws -> Int {
        var port: Int?
        let listening = await eventually(within: .seconds(60)) {
            port = Self.listeningPort(in: log)
            return port != nil || !process.isRunning
        }
        guard listening, let port else { throw ProcessError("the server did not start:\n\(log)") }
        return port
    }

    /// Sends SIGTERM, as a service manager stops the server, and waits for it to exit.
    ///
    /// - Returns: the exit status.
    /// - Throws: when the server is still running after `bound`.
    func stop(within bound: Duration) async throws -> Int32 {
        process.terminate()
        guard await eventually(within: bound, { !process.isRunning }) else {
            throw ProcessError("the server did not stop within \(bound):\n\(log)")
        }
        return process.terminationStatus
    }

    /// The port in `Listening on [IPv4]127.0.0.1/127.0.0.1:PORT (profile …)`.
    private static func listeningPort(in log: String) -> Int? {
        guard let line = log.split(separator: "\n").first(where: { $0.contains("Listening on") }),
            let profile = line.range(of: " (profile"),
            let colon = line[..<profile.lowerBound].lastIndex(of: ":")
        else { return nil }
        return Int(line[line.index(after: colon)..<profile.lowerBound])
    }

    struct ProcessError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}
