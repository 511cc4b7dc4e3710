#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// 17. A disk that stops answering: the server's SQLite file on an ext4 file system in an image
/// file, loop-mounted, which `fsfreeze` freezes for 5 seconds (15 in full mode) while 4 writers
/// post. Every write to the disk blocks in the kernel while it is frozen, where no interrupt
/// reaches it. Every request is still answered within a few seconds, 201 or 503
/// `database_timeout` (statement and lease timeouts of 1 s); reads of committed rows and
/// `/health` keep answering; once thawed, writes resume within 10 seconds; nothing
/// acknowledged is lost, the file passes `integrity_check`, and nothing stays held.
///
/// Mounting needs root, which CI runs as.
enum DiskFreezeScenario {
    static func run(_ suite: SuiteOptions) throws -> ScenarioResult {
        var result = ScenarioResult("disk-freeze")
        guard getuid() == 0 else {
            result.check("not root: no file system can be mounted", target: "run as root, as CI does", false)
            return result
        }
        let folder = suite.workFolder.appending(path: "disk-freeze")
        let mountPoint = folder.appending(path: "mounted")
        try FileManager.default.createDirectory(at: mountPoint, withIntermediateDirectories: true)
        let image = folder.appending(path: "disk.img")
        FileManager.default.createFile(atPath: image.path, contents: nil)
        try FileHandle(forWritingTo: image).truncate(atOffset: 64 << 20)
        try runCommand("/sbin/mkfs.ext4", "-q", "-F", image.path)
        try runCommand("/bin/mount", "-o", "loop", image.path, mountPoint.path)
        defer {
            _ = try? runCommand("/sbin/fsfreeze", "-u", mountPoint.path)
            _ = try? runCommand("/bin/umount", "-l", mountPoint.path)
        }
        let database = mountPoint.appending(path: "catalog.sqlite")
        let server = try ServerProcess(
            suite,
            profile: "development",
            database: database,
            environment: ["DATABASE_STATEMENT_TIMEOUT": "1", "DATABASE_LEASE_TIMEOUT": "1"]
        )
        defer { server.stop() }
        let load = WriteLoad(port: server.port, writers: 4, name: "disk-freeze")
        _ = eventually(timeout: .seconds(10)) { load.outcomes()["201", default: 0] >= 20 }
        try runCommand("/sbin/fsfreeze", "-f", mountPoint.path)
        let frozen = ContinuousClock.now
        let duration = Duration.seconds(suite.scaled(short: 5, full: 15))
        result.report("4 writers, statement and lease timeouts 1 s; the disk frozen for \(duration)")
        // While frozen: a committed row and /health, every 100 ms.
        result.checkReadsAnswer(port: server.port, while: "while frozen", within: 1) {
            Thread.sleep(forTimeInterval: 0.1)
            return ContinuousClock.now - frozen < duration
        }
        let timedOut = load.outcomes()["503 database_timeout", default: 0]
        try runCommand("/sbin/fsfreeze", "-u", mountPoint.path)
        let thawed = ContinuousClock.now
        _ = eventually(timeout: .seconds(12)) { load.firstAcknowledged(sentAfter: thawed) != nil }
        Thread.sleep(forTimeInterval: 1)
        load.stop()
        result.check(
            "while frozen: \(timedOut) writes answered 503 database_timeout",
            target: "≥ 1: writes are answered, not held",
            timedOut >= 1
        )
        result.checkAnswers(of: load, within: 5, allowed: ["503 database_timeout"])
        result.checkWritesResume(load, after: thawed, "the disk was thawed")
        result.checkNothingHeld(by: server)
        result.checkStopsOnSIGTERM(server, within: .seconds(12))
        try result.checkAcknowledgedWrites(of: load, inSQLiteFile: database.path)
        return result
    }
}
