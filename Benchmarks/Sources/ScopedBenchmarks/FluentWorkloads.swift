import FluentKit
import FluentPostgresDriver
import Foundation
import Logging
import NIOPosix

/// The table PostgresWorkloads creates, as a Fluent model.
final class FluentMovie: Model, @unchecked Sendable {
    static let schema = "movies"

    @ID(custom: "id", generatedBy: .user) var id: Int?
    @Field(key: "title") var title: String
    @Field(key: "year") var year: Int

    init() {}
}

/// The same point read as Fluent does it in a Vapor handler: a database for the request
/// (`req.db`), a transaction, and `Model.find`.
func fluentWorkloads(url: String) throws -> [Workload] {
    let databases = Databases(threadPool: .singleton, on: MultiThreadedEventLoopGroup.singleton)
    databases.use(try .postgres(url: url, maxConnectionsPerEventLoop: 2, sqlLogLevel: .trace), as: .psql)
    let logger = Logger(label: "bench", factory: { _ in SwiftLogNoOpLogHandler() })
    return [
        Workload(group: "postgres", name: "Fluent per request: req.db, transaction, Model.find") { n in
            var sum = 0
            for i in 0..<n {
                guard let database = databases.database(logger: logger, on: MultiThreadedEventLoopGroup.singleton.any())
                else { return sum }
                let id = i % 1000 + 1
                sum &+=
                    (try? await database.transaction { transaction in
                        try await FluentMovie.find(id, on: transaction)?.title.utf8.count ?? 0
                    }) ?? 0
            }
            return sum
        }
    ]
}
