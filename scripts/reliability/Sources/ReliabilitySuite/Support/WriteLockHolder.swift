import Foundation

/// The second process of the writer-contention scenario: `ReliabilitySuite hold-write-lock
/// PATH SECONDS` takes the database's write lock with `BEGIN IMMEDIATE`, prints `locked`, holds
/// it, then commits and exits.
enum WriteLockHolder {
    static let command = "hold-write-lock"

    static func run(_ arguments: [String]) -> Never {
        guard arguments.count == 2, let seconds = Double(arguments[1]) else {
            print("usage: ReliabilitySuite \(command) PATH SECONDS")
            exit(2)
        }
        do {
            let database = try RawDatabase(arguments[0])
            while database.execute("BEGIN IMMEDIATE") != 0 { Thread.sleep(forTimeInterval: 0.001) }
            say("locked")
            Thread.sleep(forTimeInterval: seconds)
            guard database.execute("COMMIT") == 0 else { throw SuiteError("COMMIT failed") }
            exit(0)
        } catch {
            print("\(error)")
            exit(1)
        }
    }

    /// Starts the holder on `database` and returns once it holds the lock.
    static func start(_ suite: SuiteOptions, database: URL, seconds: Double) throws -> Process {
        let process = Process()
        process.executableURL = suite.suiteExecutable
        process.arguments = [command, database.path, String(seconds)]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let line = output.fileHandleForReading.availableData
        guard String(decoding: line, as: UTF8.self).hasPrefix("locked") else {
            throw SuiteError("the lock holder did not take the lock: \(String(decoding: line, as: UTF8.self))")
        }
        return process
    }
}
