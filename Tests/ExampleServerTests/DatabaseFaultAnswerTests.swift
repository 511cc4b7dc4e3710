import CSQLite
import HTTPTypes
import Logging
import MovieCatalog
@testable import Scoped
import ScopedDatabase
import ScopedSQLite
import Testing

/// How the catalog answers a database that is full or does not answer in time.
struct DatabaseFaultAnswerTests {
    private let logger = Logger(label: "test")

    @Test func aFullDiskAnswers507StorageFull() {
        let full = SQLiteError(code: .full, resultCode: SQLITE_FULL, message: "database or disk is full", sql: nil)
        let answer = APIError(full, logger: logger)
        #expect(answer.status.code == 507)
        #expect(answer.code == "storage_full")
    }

    @Test func aFullDiskAtCommitAnswers507Too() {
        let full = SQLiteError(code: .full, resultCode: SQLITE_FULL, message: "database or disk is full", sql: "COMMIT")
        let closing = ScopeCloseError(failures: [.init(entry: "sqliteSession", error: full)], outcome: .success)
        #expect(APIError(closing, logger: logger).status.code == 507)
    }

    @Test(arguments: [DatabaseTimeoutError.Operation.lease, .statement, .finish])
    func aDeadlineThatExpiredAnswers503DatabaseTimeout(operation: DatabaseTimeoutError.Operation) {
        let timeout = DatabaseTimeoutError(operation: operation, timeout: .seconds(5), entry: "sqliteSession")
        let answer = APIError(timeout, logger: logger)
        #expect(answer.status == .serviceUnavailable)
        #expect(answer.code == "database_timeout")
    }
}
