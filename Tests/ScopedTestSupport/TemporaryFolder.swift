public import Foundation

/// A fresh folder for a test's files, removed when the value is dropped.
///
/// On Linux it is made in `/dev/shm`, a tmpfs, where there is one: the suite runs hundreds of
/// SQLite transactions in parallel, and on a disk whose `fsync` stalls under that load (2 cores,
/// CI) a commit took over 10 s and failed deadline tests that are about deadlines, not disks.
/// The files are real files all the same; the tests of a full disk mount a tmpfs of their own.
public final class TemporaryFolder: Sendable {
    /// Where the folders are made: `/dev/shm` when it is a writable folder, else the system's
    /// temporary directory.
    public static let base: URL = {
        let memory = URL(filePath: "/dev/shm", directoryHint: .isDirectory)
        return FileManager.default.isWritableFile(atPath: memory.path) ? memory : FileManager.default.temporaryDirectory
    }()

    /// The folder.
    public let url: URL

    /// Creates the folder; `prefix` starts its name.
    public init(prefix: String = "scoped") throws {
        url = Self.base.appending(path: "\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// The path of `name` inside the folder.
    public func path(_ name: String) -> String { url.appending(path: name).path }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }
}
