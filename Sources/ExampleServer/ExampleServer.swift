import MovieCatalog
import Foundation
import Logging

/// `swift run ExampleServer`: the movie catalog on Hummingbird, SQLite and Scoped.
@main
enum ExampleServer {
    static func main() async {
        let environment = ProcessInfo.processInfo.environment
        let configuration: AppConfiguration
        do {
            configuration = try await AppConfiguration.load(environment: environment)
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            exit(1)
        }
        let level = configuration.logLevel
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "ExampleServer")
        do {
            try await CatalogServer.run(configuration, logger: logger)
        } catch {
            logger.critical("\(error)")
            exit(1)
        }
        exit(0)
    }
}
