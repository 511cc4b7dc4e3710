import Foundation
@testable import Scoped
@testable import ScopedSQLite
import ScopedTenants
import ScopedTestSupport

// Starts everything of the library that runs threads, timers or tasks (an application root with a
// SQLite database, a tenant with a database of its own and its idle sweeper, statements under
// deadlines, bounded closes, work handed off past its scope), shuts the root down, and prints
// what is left, one `left:` line each, then `done`. A process of its own, because the watchdog
// is the process's: other tests running beside it would keep its timer alive.
// `LibraryOwnershipTests` runs it. With `--no-shutdown` it never shuts the root down, so that
// the test sees the probe report what a process that forgot to leaves running.

/// What the probe started, held weakly once it has run.
struct Started {
    weak var root: ScopeRoot?
    weak var database: SQLiteDatabase?
    weak var tenantDatabase: SQLiteDatabase?
    let writerThreads: [String]
    /// Kept only with `--no-shutdown`: a process that never shut its root down.
    let kept: ScopeRoot?
}

func start(in folder: TemporaryFolder, shutDown: Bool) async throws -> Started {
    let migrations = [SQLiteMigration(version: 1, name: "notes", statements: ["CREATE TABLE notes (text TEXT)"])]
    let root = ScopeRoot(
        services: [SQLiteDatabaseKey.self, SQLiteSessionKey.self],
        closeTimeout: .seconds(5),
        observers: [
            Tenancy(idleTimeout: .milliseconds(100)) { tenant, values in
                values.sqliteConfiguration = SQLiteConfiguration(
                    path: folder.path("\(tenant).sqlite"),
                    migrations: migrations
                )
            }
        ]
    ) {
        $0.sqliteConfiguration = SQLiteConfiguration(
            path: folder.path("app.sqlite"),
            migrations: migrations
        )
    }
    let database = try await root.withScope {
        let session = try await ScopedValues.current.service(SQLiteSessionKey.self)
        _ = try await session.execute("INSERT INTO notes (text) VALUES (\("request"))")
        handOff(timeout: .seconds(5)) { try await Task.sleep(for: .milliseconds(20)) }
        return try await ScopedValues.current.service(SQLiteDatabaseKey.self)
    }
    let tenantDatabase = try await root.withScope(tenant: TenantID("acme")!) {
        let session = try await ScopedValues.current.service(SQLiteSessionKey.self)
        _ = try await session.execute("INSERT INTO notes (text) VALUES (\("tenant"))")
        return try await ScopedValues.current.service(SQLiteTenantDatabaseKey.self)
    }
    let writerThreads = [database.writerThreadName, tenantDatabase.writerThreadName]
    if shutDown { await root.shutdown() }
    return Started(
        root: root,
        database: database,
        tenantDatabase: tenantDatabase,
        writerThreads: writerThreads,
        kept: shutDown ? nil : root
    )
}

let shutDown = !CommandLine.arguments.contains("--no-shutdown")
let folder = try TemporaryFolder(prefix: "ownership-probe")
// A global's deinit never runs at exit: the folder is removed here.
defer { try? FileManager.default.removeItem(at: folder.url) }

let started = try await start(in: folder, shutDown: shutDown)
// The watchdog's timer outlives its last deadline by its idle grace; threads and tasks end
// soon after what owns them. Waits for all of it, for at most the grace and five seconds.
let clock = ContinuousClock()
let deadline = clock.now + DeadlineWatchdog.shared.idleGrace + .seconds(5)
func leftovers() -> [String] {
    var left: [String] = []
    if DeadlineWatchdog.shared.hasTimer { left.append("the deadline watchdog's timer") }
    let threads = threadNames()
    for name in started.writerThreads where threads.contains(name) { left.append("the thread \(name)") }
    // A task of the library that still ran would hold what it works for.
    if started.root != nil { left.append("the application root, still referenced") }
    if started.database != nil { left.append("the application's SQLite database, still referenced") }
    if started.tenantDatabase != nil { left.append("the tenant's SQLite database, still referenced") }
    return left
}
while !leftovers().isEmpty && clock.now < deadline {
    try await Task.sleep(for: .milliseconds(50))
}
for left in leftovers() { print("left: \(left)") }
print("done")
