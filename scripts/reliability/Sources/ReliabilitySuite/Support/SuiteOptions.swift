import Foundation

/// Where the suite runs and how long.
struct SuiteOptions: Sendable {
    enum Mode: String, Sendable { case short, full }

    var mode: Mode
    var packageFolder: URL
    var serverExecutable: URL
    /// This executable, started again as the second process of the writer-contention scenario.
    var suiteExecutable: URL
    /// A temporary folder for databases and server logs, removed when the suite ends.
    var workFolder: URL

    /// `short` in CI, `full` for RELIABILITY.md.
    func scaled(short: Int, full: Int) -> Int { mode == .short ? short : full }

    /// A new database file in the work folder.
    func databaseFile(_ name: String) -> URL {
        workFolder.appending(path: "\(name)-\(UUID().uuidString.prefix(8)).sqlite")
    }
}
