#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization

/// 14. A full disk: the server's SQLite file on a tmpfs of 16 MiB that a ballast file fills
/// but for 1 MiB, while 4 writers post. Failed writes answer 507 `storage_full`, reads and
/// `/health` keep answering; once the ballast is removed, writes resume within 10 seconds;
/// every acknowledged write is in the file, which passes `integrity_check`.
///
/// Mounting needs root, which CI runs as.
enum DiskFullScenario {
    static func run(_ suite: SuiteOptions) throws -> ScenarioResult {
        var result = ScenarioResult("disk-full")
        guard getuid() == 0 else {
            result.check("not root: no tmpfs can be mounted", target: "run as root, as CI does", false)
            return result
        }
        let mountPoint = suite.workFolder.appending(path: "disk-full-tmpfs")
        try FileManager.default.createDirectory(at: mountPoint, withIntermediateDirectories: true)
        try runCommand("/bin/mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", mountPoint.path)
        defer { _ = try? runCommand("/bin/umount", "-l", mountPoint.path) }
        let database = mountPoint.appending(path: "catalog.sqlite")
        let server = try ServerProcess(suite, profile: "development", database: database)
        defer { server.stop() }
        let ballast = mountPoint.appending(path: "ballast")
        let room = 1 << 20
        let filled = try fill(ballast, leaving: room)
        let load = WriteLoad(port: server.port, writers: 4, name: "disk-full")
        result.report("4 writers on a 16 MiB tmpfs, \(filled / (1 << 20)) MiB of it ballast, \(room / 1024) KiB left")
        let full = eventually(timeout: .seconds(60)) { load.outcomes()["507 storage_full", default: 0] >= 20 }
        // The disk is full: reads and /health must still answer, 20 rounds.
        var round = 0
        result.checkReadsAnswer(port: server.port, while: "while full", within: 10) {
            round += 1
            return round <= 20
        }
        try FileManager.default.removeItem(at: ballast)
        let freed = ContinuousClock.now
        _ = eventually(timeout: .seconds(12)) { load.firstAcknowledged(sentAfter: freed) != nil }
        Thread.sleep(forTimeInterval: 1)
        load.stop()
        result.check(
            "the disk filled: \(load.outcomes()["507 storage_full", default: 0]) answered 507 storage_full",
            target: "≥ 20",
            full
        )
        result.checkAnswers(of: load, within: 10, allowed: ["507 storage_full"])
        result.checkWritesResume(load, after: freed, "the space was freed")
        result.checkStopsOnSIGTERM(server, within: .seconds(12))
        try result.checkAcknowledgedWrites(of: load, inSQLiteFile: database.path)
        return result
    }

    /// Writes zeros to `file` until the file system is full, then gives `room` bytes back;
    /// returns the file's size.
    private static func fill(_ file: URL, leaving room: Int) throws -> Int {
        _ = FileManager.default.createFile(atPath: file.path, contents: nil)
        let handle = try FileHandle(forWritingTo: file)
        defer { try? handle.close() }
        let chunk = Data(count: 64 * 1024)
        var size = 0
        while (try? handle.write(contentsOf: chunk)) != nil { size += chunk.count }
        // A partial last chunk may have been written: measure, then give the room back.
        size = Int(try handle.seekToEnd())
        try handle.truncate(atOffset: UInt64(max(0, size - room)))
        try handle.synchronize()
        return max(0, size - room)
    }
}
