import Foundation

/// Runs the program at `path` with `arguments` and waits for it: the mounts and file-system
/// commands of the disk scenarios.
///
/// - Throws: a ``SuiteError`` when it exits with a status other than 0.
func runCommand(_ path: String, _ arguments: String...) throws {
    let process = Process()
    process.executableURL = URL(filePath: path)
    process.arguments = arguments
    try process.run()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw SuiteError("\(path) \(arguments.joined(separator: " ")) exited with \(process.terminationStatus)")
    }
}
