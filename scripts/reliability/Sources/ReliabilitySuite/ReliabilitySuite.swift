import Foundation

/// `scripts/reliability/run [--full] [--only name,name]`: runs every scenario against the built
/// ExampleServer on loopback, prints one line per scenario, and exits 1 when a figure misses
/// its target.
@main
enum ReliabilitySuite {
    static let scenarios: [(name: String, run: @Sendable (SuiteOptions) async throws -> ScenarioResult)] = [
        ("isolation", { try await IsolationScenario.run($0, on: .sqlite) }),
        ("disconnects", { try await DisconnectScenario.run($0, on: .sqlite) }),
        ("crash-mid-request", { try await CrashDurabilityScenario.run($0, on: .sqlite) }),
        ("bad-input", { try await BadInputScenario.run($0, on: .sqlite) }),
        ("lockdown", ProductionLockdownScenario.run),
        ("first-use", ConcurrentFirstUseScenario.run),
        ("contention", { try await WriterContentionScenario.run($0, on: .sqlite) }),
        ("shutdown", { try await GracefulShutdownScenario.run($0, on: .sqlite) }),
        ("static", StaticChecksScenario.run),
        ("log-secrets", LogSecretsScenario.run),
        ("idle-timeout", IdleTimeoutScenario.run),
        ("reload", { try ReloadScenario.run($0, on: .sqlite) }),
        ("tenants", { try await TenantsScenario.run($0, on: .sqlite) }),
        // The same scenarios with the server on PostgreSQL, and two servers on one database.
        ("isolation-pg", { try await IsolationScenario.run($0, on: .postgres) }),
        ("disconnects-pg", { try await DisconnectScenario.run($0, on: .postgres) }),
        ("crash-mid-request-pg", { try await CrashDurabilityScenario.run($0, on: .postgres) }),
        ("bad-input-pg", { try await BadInputScenario.run($0, on: .postgres) }),
        ("contention-pg", { try await WriterContentionScenario.run($0, on: .postgres) }),
        ("shutdown-pg", { try await GracefulShutdownScenario.run($0, on: .postgres) }),
        ("reload-pg", { try ReloadScenario.run($0, on: .postgres) }),
        ("tenants-pg", { try await TenantsScenario.run($0, on: .postgres) }),
        ("scale-out", ScaleOutScenario.run),
        ("shared-settings", { try SharedSettingsScenario.run($0) }),
        ("shared-tenants", { try SharedTenantsScenario.run($0) }),
        // What the things the server depends on do wrong.
        ("pg-restart", { try PostgresRestartScenario.run($0) }),
        ("pg-freeze", { try PostgresFreezeScenario.run($0) }),
        ("pg-reads", { try PostgresReadsScenario.run($0) }),
        ("disk-full", { try DiskFullScenario.run($0) }),
        ("disk-freeze", { try DiskFreezeScenario.run($0) }),
        ("close-hang", { try CloseHangScenario.run($0) }),
        ("health-under-fsync", { try HealthUnderFsyncScenario.run($0) }),
    ]

    static func main() async {
        var arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.first == WriteLockHolder.command {
            WriteLockHolder.run(Array(arguments.dropFirst()))
        }
        var mode = SuiteOptions.Mode.short
        var only: Set<String>?
        var server: String?
        while !arguments.isEmpty {
            let argument = arguments.removeFirst()
            switch argument {
            case "--full": mode = .full
            case "--short": mode = .short
            case "--only" where !arguments.isEmpty:
                only = Set(arguments.removeFirst().split(separator: ",").map(String.init))
            case "--server" where !arguments.isEmpty: server = arguments.removeFirst()
            default:
                print(
                    "usage: ReliabilitySuite [--short | --full] [--only \(scenarios.map(\.name).joined(separator: ","))] [--server PATH]"
                )
                exit(2)
            }
        }
        let executable = URL(filePath: CommandLine.arguments[0]).standardizedFileURL
        let packageFolder = URL(filePath: FileManager.default.currentDirectoryPath)
        let work = FileManager.default.temporaryDirectory.appending(
            path: "scoped-reliability-\(UUID().uuidString.prefix(8))"
        )
        try? FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        let options = SuiteOptions(
            mode: mode,
            packageFolder: packageFolder,
            serverExecutable: server.map { URL(filePath: $0) }
                ?? executable.deletingLastPathComponent().appending(path: "ExampleServer"),
            suiteExecutable: executable,
            workFolder: work
        )
        say("Reliability suite, \(mode.rawValue) mode, server \(options.serverExecutable.path)")
        var failed: [String] = []
        for scenario in scenarios where only?.contains(scenario.name) ?? true {
            let start = ContinuousClock.now
            let result: ScenarioResult
            do {
                result = try await scenario.run(options)
            } catch {
                var broken = ScenarioResult(scenario.name)
                broken.check("could not run: \(error)", target: "runs", false)
                result = broken
            }
            let seconds = String(format: "%.1f", (ContinuousClock.now - start).inSeconds)
            let name = result.name.padding(toLength: max(18, result.name.count + 1), withPad: " ", startingAt: 0)
            say("\(result.passed ? "PASS" : "FAIL")  \(name) \(result.figures.joined(separator: "; ")) [\(seconds) s]")
            if !result.passed { failed.append(result.name) }
        }
        if failed.isEmpty {
            try? FileManager.default.removeItem(at: work)
            print("All scenarios met their targets.")
        } else {
            print("Missed targets: \(failed.joined(separator: ", ")). Server logs are in \(work.path).")
            exit(1)
        }
    }
}

/// Prints `line` at once, even when standard output is a pipe.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
