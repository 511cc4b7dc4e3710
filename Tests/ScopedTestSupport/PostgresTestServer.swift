public import Foundation

/// A PostgreSQL server for tests: the one `POSTGRES_URL` names, or else a throwaway cluster
/// started from Debian's `postgresql` binaries (`/usr/lib/postgresql/*/bin`), on 127.0.0.1 and
/// a free port, shared by every test of the process and removed when the process exits.
///
/// PostgreSQL refuses to run as root; as root, the cluster runs as the `postgres` user. Each
/// test asks for a database of its own with ``makeDatabase()``.
public final class PostgresTestServer: Sendable {
    /// The server's host.
    public let host: String
    /// The server's port.
    public let port: Int
    /// The superuser tests connect as (trust authentication, no password).
    public let username: String
    /// The password, for a server named by `POSTGRES_URL`.
    public let password: String?
    private let psqlPath: String
    /// The cluster's data folder, binaries and server options, for a cluster this process started.
    private let cluster: (data: String, bin: String, options: String)?

    private init(
        host: String,
        port: Int,
        username: String,
        password: String?,
        psqlPath: String,
        cluster: (data: String, bin: String, options: String)? = nil
    ) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.psqlPath = psqlPath
        self.cluster = cluster
    }

    /// Why no server can be had, or `nil` when one can: the line a skipped suite shows.
    public static let unavailableReason: String? = {
        if ProcessInfo.processInfo.environment["POSTGRES_URL"] != nil { return nil }
        return binFolder == nil
            ? "No PostgreSQL binaries in /usr/lib/postgresql/*/bin: apt-get install postgresql" : nil
    }()

    /// Whether PostgreSQL suites run: a server can be had, or CI requires them
    /// (`SCOPED_REQUIRE_POSTGRES=1`), in which case a missing server fails them instead.
    public static let isEnabled: Bool =
        unavailableReason == nil || ProcessInfo.processInfo.environment["SCOPED_REQUIRE_POSTGRES"] == "1"

    /// The process's server, started on first use.
    ///
    /// - Throws: ``PostgresTestServerError`` when none can be started.
    public static func shared() async throws -> PostgresTestServer {
        try await offThePool { try started.get() }
    }

    /// The process's server, waited for on the calling thread: for a program that is not a
    /// test, where blocking a thread costs nothing else.
    @available(*, noasync, message: "use the async shared(): it holds no cooperative thread")
    public static func sharedBlocking() throws -> PostgresTestServer {
        try started.get()
    }

    private static let started: Result<PostgresTestServer, any Error> = Result { try start() }

    /// A cluster of the caller's own, never `POSTGRES_URL`'s server.
    ///
    /// A fault test may restart, stop or freeze it without disturbing other tests. It is
    /// removed when the process exits.
    ///
    /// - Throws: ``PostgresTestServerError`` when none can be started.
    public static func dedicated() async throws -> PostgresTestServer {
        try await offThePool { try startCluster() }
    }

    /// ``dedicated()``, waited for on the calling thread, for a program that is not a test.
    @available(*, noasync, message: "use the async dedicated(): it holds no cooperative thread")
    public static func dedicatedBlocking() throws -> PostgresTestServer {
        try startCluster()
    }

    // MARK: - Faults, on a dedicated cluster

    /// Restarts the cluster with `pg_ctl restart -m mode` (`fast` or `immediate`) and waits
    /// until it accepts connections again.
    public func restart(mode: String) async throws {
        _ = try await Self.offThePool { try self.restartBlocking(mode: mode) }
    }

    /// ``restart(mode:)``, waited for on the calling thread, for a program that is not a test.
    @available(*, noasync, message: "use the async restart(mode:): it holds no cooperative thread")
    public func restartBlocking(mode: String) throws {
        _ = try pgCtl(["-m", mode, "-w", "-t", "60", "restart"])
    }

    /// Stops the cluster with `pg_ctl stop -m mode`; connections to it are refused until
    /// ``startAgain()``.
    public func stop(mode: String) async throws {
        _ = try await Self.offThePool { try self.stopBlocking(mode: mode) }
    }

    /// ``stop(mode:)``, waited for on the calling thread, for a program that is not a test.
    @available(*, noasync, message: "use the async stop(mode:): it holds no cooperative thread")
    public func stopBlocking(mode: String) throws {
        _ = try pgCtl(["-m", mode, "-w", "-t", "60", "stop"])
    }

    /// Starts a cluster that ``stop(mode:)`` stopped, on the same port, and waits until it
    /// accepts connections.
    public func startAgain() async throws {
        try await Self.offThePool { try self.startAgainBlocking() }
    }

    /// ``startAgain()``, waited for on the calling thread, for a program that is not a test.
    @available(*, noasync, message: "use the async startAgain(): it holds no cooperative thread")
    public func startAgainBlocking() throws {
        guard let cluster else { throw PostgresTestServerError(message: "not a cluster this process started") }
        _ = try pgCtl(["-w", "-t", "60", "-o", cluster.options, "start"])
    }

    /// The process IDs of the cluster's server: the postmaster and every process it started.
    public func serverProcessIDs() throws -> [pid_t] {
        guard let cluster else { throw PostgresTestServerError(message: "not a cluster this process started") }
        let pidFile = try String(contentsOfFile: "\(cluster.data)/postmaster.pid", encoding: .utf8)
        guard let postmaster = pidFile.split(separator: "\n").first.flatMap({ pid_t($0) }) else {
            throw PostgresTestServerError(message: "postmaster.pid names no process")
        }
        let children = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [])
            .compactMap {
                entry -> pid_t? in
                guard let pid = pid_t(entry),
                    let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                    let end = stat.lastIndex(of: ")")
                else { return nil }
                // After the command's closing parenthesis: state, then the parent's ID.
                let fields = stat[stat.index(after: end)...].split(separator: " ")
                return fields.count > 1 && pid_t(fields[1]) == postmaster ? pid : nil
            }
        return [postmaster] + children
    }

    /// Sends `signal` to every process of the cluster's server: `SIGSTOP` freezes it as a
    /// wedged server or a partition looks from a client, `SIGCONT` thaws it.
    public func signalServer(_ signal: Int32) throws {
        for pid in try serverProcessIDs() { kill(pid, signal) }
    }

    private func pgCtl(_ arguments: [String]) throws -> Int32 {
        guard let cluster else { throw PostgresTestServerError(message: "not a cluster this process started") }
        let all = ["-D", cluster.data, "-l", "\(cluster.data)/../server.log"] + arguments
        let status = try Self.spawnAndWait(
            getuid() == 0 ? "/usr/sbin/runuser" : "\(cluster.bin)/pg_ctl",
            (getuid() == 0 ? ["-u", "postgres", "--", "\(cluster.bin)/pg_ctl"] : []) + all
        )
        guard status == 0 else {
            throw PostgresTestServerError(message: "pg_ctl \(arguments.joined(separator: " ")) exited with \(status)")
        }
        return status
    }

    /// A database on the test server: its name, for `psql`, and its URL, for a client.
    public struct Database: Sendable {
        /// The database's name.
        public let name: String
        /// `postgres://user@host:port/name`.
        public let url: String
    }

    /// A new empty database on the server.
    ///
    /// - Returns: its name and URL.
    /// - Throws: ``PostgresTestServerError`` when `psql` fails.
    public func makeDatabase() async throws -> Database {
        try await Self.offThePool { try self.makeDatabaseBlocking() }
    }

    /// ``makeDatabase()``, waited for on the calling thread, for a program that is not a test.
    @available(*, noasync, message: "use the async makeDatabase(): it holds no cooperative thread")
    public func makeDatabaseBlocking() throws -> Database {
        let name = "test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(20)
        try psqlBlocking("CREATE DATABASE \(name)")
        return Database(name: String(name), url: url(database: String(name)))
    }

    /// The URL of `database` on the server.
    public func url(database: String) -> String {
        "postgres://\(username)\(password.map { ":\($0)" } ?? "")@\(host):\(port)/\(database)"
    }

    /// Runs `sql` with `psql` on `database` and returns what it printed, unaligned, one row
    /// per line.
    @discardableResult
    public func psql(_ sql: String, database: String = "postgres") async throws -> String {
        try await Self.offThePool { try self.psqlBlocking(sql, database: database) }
    }

    /// ``psql(_:database:)``, waited for on the calling thread, for a program that is not a test.
    @available(*, noasync, message: "use the async psql(_:database:): it holds no cooperative thread")
    @discardableResult
    public func psqlBlocking(_ sql: String, database: String = "postgres") throws -> String {
        var environment = ProcessInfo.processInfo.environment
        if let password { environment["PGPASSWORD"] = password }
        return try Self.run(
            psqlPath,
            ["-h", host, "-p", "\(port)", "-U", username, "-d", database, "-v", "ON_ERROR_STOP=1", "-Atc", sql],
            environment: environment
        )
    }

    /// Starts `psql` running `sql` on `database` and returns it running: a session that holds
    /// a lock, say, until `sql` finishes.
    public func startPsql(_ sql: String, database: String) throws -> Process {
        let process = Process()
        process.executableURL = URL(filePath: psqlPath)
        process.arguments = [
            "-h", host, "-p", "\(port)", "-U", username, "-d", database, "-v", "ON_ERROR_STOP=1", "-Atc", sql,
        ]
        if let password { process.environment = ["PGPASSWORD": password] }
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        return process
    }

    // MARK: - Starting

    private static let binFolder: String? = {
        let root = "/usr/lib/postgresql"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        return versions.compactMap(Int.init).sorted().reversed()
            .map { "\(root)/\($0)/bin" }
            .first { FileManager.default.isExecutableFile(atPath: "\($0)/initdb") }
    }()

    private static func start() throws -> PostgresTestServer {
        if let url = ProcessInfo.processInfo.environment["POSTGRES_URL"] {
            guard let components = URLComponents(string: url), let host = components.host, let user = components.user
            else {
                throw PostgresTestServerError(message: "POSTGRES_URL is not postgres://user@host:port/db")
            }
            return PostgresTestServer(
                host: host,
                port: components.port ?? 5432,
                username: user,
                password: components.password,
                psqlPath: binFolder.map { "\($0)/psql" } ?? "/usr/bin/psql"
            )
        }
        return try startCluster()
    }

    private static func startCluster() throws -> PostgresTestServer {
        guard let bin = binFolder else {
            throw PostgresTestServerError(message: unavailableReason ?? "no PostgreSQL binaries")
        }
        let folder = FileManager.default.temporaryDirectory.appending(path: "scoped-pg-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let isRoot = getuid() == 0
        // As root, the cluster's files belong to `postgres`, which runs it.
        if isRoot { try run("/bin/chown", ["postgres:postgres", folder]) }
        let asOwner = { (tool: String, arguments: [String]) throws -> String in
            isRoot
                ? try run("/usr/sbin/runuser", ["-u", "postgres", "--", "\(bin)/\(tool)"] + arguments)
                : try run("\(bin)/\(tool)", arguments)
        }
        let data = "\(folder)/data"
        _ = try asOwner(
            "initdb",
            ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8", "--locale=C"]
        )
        let port = try freePort()
        // pg_stat_statements: the round-trip tests count the statements a request sends.
        let options =
            "-p \(port) -k \(folder) -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=300"
            + " -c shared_preload_libraries=pg_stat_statements"
        // With posix_spawn, not Foundation's Process: the server pg_ctl leaves running would
        // inherit the descriptor Process watches for its child's exit, which then never comes.
        let status = try spawnAndWait(
            isRoot ? "/usr/sbin/runuser" : "\(bin)/pg_ctl",
            (isRoot ? ["-u", "postgres", "--", "\(bin)/pg_ctl"] : [])
                + ["-D", data, "-l", "\(folder)/server.log", "-w", "-t", "30", "-o", options, "start"]
        )
        guard status == 0 else {
            let log = (try? String(contentsOfFile: "\(folder)/server.log", encoding: .utf8)) ?? ""
            throw PostgresTestServerError(message: "pg_ctl start exited with \(status): \(log)")
        }
        // Stops the cluster and removes its folder once this process has gone, however it ends.
        let stop = isRoot ? "/usr/sbin/runuser -u postgres -- \(bin)/pg_ctl" : "\(bin)/pg_ctl"
        // In a session of its own, so that killing this process's group does not stop it.
        _ = try spawn(
            "/usr/bin/setsid",
            [
                "/bin/sh", "-c",
                "while kill -0 \(getpid()) 2>/dev/null; do sleep 1; done; \(stop) -D \(data) -m immediate stop; rm -rf \(folder)",
            ]
        )
        return PostgresTestServer(
            host: "127.0.0.1",
            port: port,
            username: "postgres",
            password: nil,
            psqlPath: "\(bin)/psql",
            cluster: (data, bin, options)
        )
    }

    /// Starts `path` with its output to /dev/null and returns its process ID.
    private static func spawn(_ path: String, _ arguments: [String]) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        // Through bash, which closes every other descriptor it inherited before it runs `path`:
        // a server started mid-run (a restart) would otherwise keep another test's `Process`
        // pipe open, and that test would wait for ever for its end. (glibc's
        // `posix_spawn_file_actions_addclosefrom_np` is not visible to Swift.)
        let closingOthers =
            #"for fd in /proc/$$/fd/*; do fd=${fd##*/}; [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done; exec "$@""#
        let argv = (["/bin/bash", "-c", closingOthers, "bash", path] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, "/bin/bash", &actions, nil, argv, environ)
        guard result == 0 else { throw PostgresTestServerError(message: "cannot start \(path): error \(result)") }
        return pid
    }

    /// Runs `path` with its output to /dev/null and returns its exit status.
    private static func spawnAndWait(_ path: String, _ arguments: [String]) throws -> Int32 {
        let pid = try spawn(path, arguments)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        return (status >> 8) & 0xFF
    }

    private static func freePort() throws -> Int {
        let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0
            }
        }
        guard bound else { throw PostgresTestServerError(message: "no free port on 127.0.0.1") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Runs `body` on a thread of its own, and waits for it without holding one of Swift's
    /// cooperative threads.
    ///
    /// A process's start, and a `CREATE DATABASE`'s `fsync` on a disk that a build beside the
    /// tests keeps busy, can take seconds; on the cooperative pool (two threads here), two such
    /// calls stopped every other test, and deadlines counted the wait.
    private static func offThePool<R: Sendable>(_ body: @escaping @Sendable () throws -> R) async throws -> R {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try body() }) }.start()
        }
    }

    @discardableResult
    private static func run(_ path: String, _ arguments: [String], environment: [String: String]? = nil) throws
        -> String
    {
        let process = Process()
        process.executableURL = URL(filePath: path)
        process.arguments = arguments
        if let environment { process.environment = environment }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        guard process.terminationStatus == 0 else {
            throw PostgresTestServerError(
                message: "\(path) \(arguments.joined(separator: " ")) exited with \(process.terminationStatus): \(text)"
            )
        }
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// The test server could not be started or used.
public struct PostgresTestServerError: Error, CustomStringConvertible {
    /// What went wrong.
    public var message: String
    /// A description for test output.
    public var description: String { message }
}
