import Foundation
public import Scoped
public import ScopedDatabase

/// A SQLite database of the test's own, for ScopedTesting's `.scoped(database:)` trait: a new
/// file with `migrations` applied, which every `sqliteDatabase` read in the test returns, and
/// which is deleted when the test ends.
///
/// ```swift
/// @Test(.scoped(database: .sqlite(migrations: SQLiteMovieRepository.migrations)))
/// func ratingAMovieStoresIt() async throws { … }
/// ```
///
/// SQLite has one writer per file, so tests cannot share a file the way PostgreSQL tests share
/// a database: a transaction held open for one test would hold the write lock, and every other
/// test's writes would wait for it. Each test gets a file instead, which gives the same
/// promises: tests run in parallel, see no one else's rows, and clean up nothing.
public struct SQLiteTestDatabase: TestDatabase {
    /// How each test's file is opened; its path is replaced by the test's own.
    public var configuration: SQLiteConfiguration

    /// A test database opened with `configuration`, at a path of the test's own.
    public init(configuration: SQLiteConfiguration) {
        self.configuration = configuration
    }

    /// Opens a new file for the test, runs `body` with the update that lends it to every
    /// `sqliteDatabase` read, then closes and deletes it.
    public func withIsolation<R: Sendable>(
        for test: String,
        _ body: (_ isolate: @escaping @Sendable (inout ScopedValues) -> Void) async throws -> R
    ) async throws -> R {
        let folder = FileManager.default.temporaryDirectory
            .appending(path: "scoped-test-\(UUID().uuidString)", directoryHint: .isDirectory)
        var configuration = configuration
        configuration.path = folder.appending(path: "test.sqlite").path
        let database = try await SQLiteDatabase.opening(configuration, closesWithItsRoot: false)
        defer { try? FileManager.default.removeItem(at: folder) }
        // A session kept past the test (reported as work left running) holds the end for at
        // most a statement's time.
        let close = {
            _ = try? await DeadlineWatchdog.shared.run(
                { await database.close() },
                abandoningAfter: configuration.statementTimeout
            ) {
                CancellationError()
            }
        }
        let lent = LentSQLiteDatabase(database: database, folder: folder, configuration: configuration)
        do {
            let result = try await body { $0[SQLiteTestDatabaseKey.self] = lent }
            await close()
            return result
        } catch {
            await close()
            throw error
        }
    }
}

extension TestDatabase where Self == SQLiteTestDatabase {
    /// A SQLite file of each test's own, with `migrations` applied.
    ///
    /// - Parameters:
    ///   - migrations: the schema.
    ///   - readers: how many reader connections it keeps.
    /// - Returns: the test database, for `.scoped(database:)`.
    public static func sqlite(migrations: [SQLiteMigration], readers: Int = 2) -> SQLiteTestDatabase {
        // `synchronous = OFF`: a test's file is deleted when it ends, so it need not survive a
        // power loss, and tests that write do not each wait for the disk.
        SQLiteTestDatabase(
            configuration: SQLiteConfiguration(path: "", readers: readers, synchronous: .off, migrations: migrations)
        )
    }
}

/// The database a test lent to its scopes; unset outside `.scoped(database:)`.
enum SQLiteTestDatabaseKey: ScopedKey {
    static var defaultValue: LentSQLiteDatabase? { nil }
}

/// A test's database, and where its tenants' go.
struct LentSQLiteDatabase: Sendable {
    /// The test's own database, which every session of no tenant uses.
    let database: SQLiteDatabase
    /// The test's folder, deleted when it ends.
    let folder: URL
    /// How the test's database was opened.
    let configuration: SQLiteConfiguration

    /// A new database for `tenant`, in the test's folder, opened as the test's database was.
    ///
    /// Each tenant of the test has its own, as it would in production. It closes with its
    /// tenant, and its file goes with the folder.
    func tenantDatabase(for tenant: TenantID) async throws -> SQLiteDatabase {
        var configuration = configuration
        configuration.path = folder.appending(path: "tenants/\(tenant).sqlite").path
        return try await SQLiteDatabase.open(configuration)
    }
}
