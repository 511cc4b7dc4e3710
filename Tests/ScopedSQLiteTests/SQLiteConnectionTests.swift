import CSQLite
import Foundation
@testable import ScopedSQLite
import Synchronization
import Testing
import ScopedTestSupport

struct SQLiteConnectionTests {
    /// A connection opened without SQLite's own mutex, used by a second thread while a long
    /// query runs on the first: the process stops naming the fault, instead of SQLite
    /// corrupting memory or answering both.
    @Test func aSecondUserAtOnceStopsTheProcessNamingTheFault() async throws {
        let folder = try TemporaryFolder()
        let path = folder.path("shared.sqlite")
        let result = await #expect(
            processExitsWith: .failure,
            observing: [\.standardErrorContent]
        ) { [path = path as String] in
            let connection = try SQLiteConnection(
                path: path,
                flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                isWriter: true
            )
            let finished = Atomic<Bool>(false)
            let long = Thread {
                // About a second of work on the first thread.
                _ = try? connection.scalar(
                    """
                    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000000)
                    SELECT count(*) FROM n
                    """,
                    as: Int.self
                )
                finished.store(true, ordering: .releasing)
            }
            long.start()
            // The second thread keeps using the connection until the first is done.
            while !finished.load(ordering: .acquiring) {
                _ = try connection.scalar("SELECT 1", as: Int.self)
                Thread.sleep(forTimeInterval: 0.001)
            }
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("SQLiteConnection on \(path) used by two tasks at once"))
    }
}
