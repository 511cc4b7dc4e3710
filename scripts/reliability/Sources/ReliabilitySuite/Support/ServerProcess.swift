#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization

/// The built ExampleServer, started as its own process on a loopback port.
///
/// Client threads share it: `Process` may be asked from any thread, and the signal time is behind a lock.
final class ServerProcess: @unchecked Sendable {
    let port: Int
    let logFile: URL
    private let process = Process()
    private let signalTime = Mutex<ContinuousClock.Instant?>(nil)

    /// When the last signal was sent.
    var signalledAt: ContinuousClock.Instant? { signalTime.withLock { $0 } }

    /// Starts the server with `environment` over a minimal one (`PATH`, `HOME`, `CONFIG_DIR`,
    /// `HTTP_PORT`, and the sanitizers' options when set); returns once `/health` answers.
    init(
        _ suite: SuiteOptions,
        profile: String,
        database: URL,
        environment: [String: String] = [:],
        waitUntilHealthy: Bool = true
    ) throws {
        port = try Self.freePort()
        logFile = suite.workFolder.appending(path: "server-\(profile)-\(port).log")
        FileManager.default.createFile(atPath: logFile.path, contents: nil)
        let log = try FileHandle(forWritingTo: logFile)
        process.executableURL = suite.serverExecutable
        process.currentDirectoryURL = suite.packageFolder
        var variables = [
            "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
            "HOME": ProcessInfo.processInfo.environment["HOME"] ?? "/tmp",
            "APP_ENV": profile,
            "CONFIG_DIR": suite.packageFolder.appending(path: "Config").path,
            "HTTP_PORT": String(port),
            "DATABASE_PATH": database.path,
            "LOG_LEVEL": "warning",
        ]
        // A sanitized server (scripts/sanitizers) reads its options from these.
        for name in ["ASAN_OPTIONS", "TSAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"] {
            if let value = ProcessInfo.processInfo.environment[name] { variables[name] = value }
        }
        variables.merge(environment) { $1 }
        process.environment = variables
        process.standardOutput = log
        process.standardError = log
        try process.run()
        try log.close()  // The server holds its own copy.
        if waitUntilHealthy { try self.waitUntilHealthy() }
    }

    var pid: Int32 { process.processIdentifier }
    var isRunning: Bool { process.isRunning }

    func waitUntilHealthy(timeout: Duration = .seconds(60)) throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            guard process.isRunning else { throw SuiteError("the server exited during start-up:\n\(log)") }
            if let connection = try? HTTPConnection(port: port, timeout: 5),
                let response = try? connection.perform(HTTPRequest("GET", "/health")), response.status == 200
            {
                return
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        throw SuiteError("the server did not answer /health within \(timeout):\n\(log)")
    }

    func signal(_ signal: Int32) {
        signalTime.withLock { $0 = .now }
        kill(process.processIdentifier, signal)
    }

    /// Waits for the process to exit; returns its exit status, or nil on timeout.
    func waitForExit(timeout: Duration = .seconds(60)) -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning && ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.005) }
        guard !process.isRunning else { return nil }
        return process.terminationReason == .uncaughtSignal
            ? 128 + process.terminationStatus : process.terminationStatus
    }

    /// Stops the server: SIGTERM, then SIGKILL if it has not exited in 30 seconds.
    func stop() {
        guard process.isRunning else { return }
        signal(SIGTERM)
        if waitForExit(timeout: .seconds(30)) == nil {
            signal(SIGKILL)
            _ = waitForExit()
        }
    }

    deinit { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }

    var log: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

    /// The server's resident memory, in bytes, from /proc.
    var residentMemory: Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kilobytes = Int(line.split(separator: " ")[1])
        else { return nil }
        return kilobytes * 1024
    }

    /// A port nothing listens on now: bound to port 0, read back, released.
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw SuiteError("cannot find a free port: \(String(cString: strerror(errno)))") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
