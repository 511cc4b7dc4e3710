public import Foundation
import Synchronization

/// A disk that can stop answering.
///
/// An ext4 file system in an image file, loop-mounted, which ``freeze()`` freezes with
/// `fsfreeze` until ``thaw()``. While it is frozen every write and `fsync` to it blocks in the
/// kernel, as on a disk whose controller hangs, and no signal or `sqlite3_interrupt` ends them.
///
/// Mounting needs root (CI runs as root) and the `mount`, `mkfs.ext4` and `fsfreeze` commands
/// (util-linux, e2fsprogs). The file system is thawed, unmounted and deleted when the value is
/// dropped.
public final class FreezableDisk: Sendable {
    /// Why no disk can be made here, or `nil` when one can.
    public static let unavailableReason: String? = {
        guard getuid() == 0 else { return "mounting a file system needs root" }
        for tool in ["/usr/sbin/mkfs.ext4", "/usr/sbin/fsfreeze", "/bin/mount"]
        where !FileManager.default.isExecutableFile(atPath: tool) {
            return "\(tool) is missing"
        }
        return nil
    }()

    /// Whether the tests that need a frozen disk run: when one can be made, or always in CI, where
    /// a disk that cannot be made fails them instead of skipping them.
    public static var isAvailable: Bool {
        unavailableReason == nil || ProcessInfo.processInfo.environment["CI"] == "true"
    }

    private let folder: TemporaryFolder
    private let isFrozen = Mutex(false)
    /// Where the file system is mounted.
    public let mountPoint: URL

    /// Makes, formats and mounts a file system of `megabytes`.
    public init(megabytes: Int = 32) throws {
        if let reason = Self.unavailableReason { throw DiskError(message: "no freezable disk: \(reason)") }
        folder = try TemporaryFolder(prefix: "frozen-disk")
        let image = folder.path("disk.img")
        mountPoint = folder.url.appending(path: "mounted")
        try FileManager.default.createDirectory(at: mountPoint, withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: image, contents: nil)
        try FileHandle(forWritingTo: URL(filePath: image)).truncate(atOffset: UInt64(megabytes) << 20)
        try Self.run("/usr/sbin/mkfs.ext4", "-q", "-F", image)
        try Self.run("/bin/mount", "-o", "loop", image, mountPoint.path)
    }

    deinit {
        try? thaw()
        _ = try? Self.run("/bin/umount", "-l", mountPoint.path)
    }

    /// The path of `name` on the disk.
    public func path(_ name: String) -> String { mountPoint.appending(path: name).path }

    /// Stops the disk answering writes: each blocks until ``thaw()``.
    public func freeze() throws {
        try isFrozen.withLock { isFrozen in
            guard !isFrozen else { return }
            try Self.run("/usr/sbin/fsfreeze", "-f", mountPoint.path)
            isFrozen = true
        }
    }

    /// Lets the disk answer again, if it is frozen; the writes it held go through.
    public func thaw() throws {
        try isFrozen.withLock { isFrozen in
            guard isFrozen else { return }
            try Self.run("/usr/sbin/fsfreeze", "-u", mountPoint.path)
            isFrozen = false
        }
    }

    private static func run(_ tool: String, _ arguments: String...) throws {
        let process = Process()
        process.executableURL = URL(filePath: tool)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            throw DiskError(message: "\(tool) \(arguments.joined(separator: " ")): \(message)")
        }
    }

    /// A command the disk needs failed.
    public struct DiskError: Error, CustomStringConvertible {
        /// What failed.
        public let description: String
        init(message: String) { description = message }
    }
}
