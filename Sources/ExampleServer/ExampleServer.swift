import CatalogApp
import Foundation
import Logging

/// `swift run ExampleServer`: the movie catalog on Hummingbird, SQLite and Scoped.
///
/// `swift run ExampleServer prune-history` deletes old movie history once and exits, instead
/// of serving.
@main
enum ExampleServer {
    static func main() async {
        let environment = ProcessInfo.processInfo.environment
        // Before the configuration is loaded: the loggers it makes (the settings and tenants kept
        // in PostgreSQL) follow the live level too. A reload of `log.level` changes it for every logger.
        LoggingSystem.bootstrap(LiveLogLevel.handler)
        let configuration: AppConfiguration
        do {
            configuration = try await AppConfiguration.load(environment: environment)
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            exit(1)
        }
        LiveLogLevel.shared.level = configuration.logLevel
        let logger = Logger(label: "ExampleServer")
        do {
            switch CommandLine.arguments.dropFirst().first {
            case nil:
                try await CatalogServer.run(configuration, environment: environment, logger: logger)
            case "prune-history":
                let pruned = try await CatalogServer.pruneHistory(configuration, logger: logger)
                logger.notice("Pruned \(pruned) history entries")
            case let command?:
                logger.critical("Unknown command '\(command)'; the only command is prune-history")
                exit(2)
            }
        } catch {
            logger.critical("\(error)")
            exit(1)
        }
        exit(0)
    }
}
