import Foundation
import Scoped
import ScopedSQLite
import Synchronization

/// 6. Concurrent first use: 1,000 tasks, each in its own request scope, read a never-read app
/// service at the same moment. It must be built exactly once and all of them must get it.
///
/// The service is the library's real SQLite database service on a real file, counted. This
/// runs in-process, not through the server: the server validates its root before it binds its
/// port, and validation builds every app service, so no request ever meets an unbuilt one.
enum ConcurrentFirstUseScenario {
    static let constructions = Atomic<Int>(0)

    enum CountedDatabaseKey: ScopedServiceKey {
        static let lifetime = ScopedLifetime.app

        static func makeValue() async throws -> SQLiteDatabase {
            constructions.add(1, ordering: .relaxed)
            return try await SQLiteDatabaseKey.makeValue()
        }

        static func close(_ database: SQLiteDatabase, outcome: ScopeOutcome) async throws {
            await database.close()
        }
    }

    static func run(_ suite: SuiteOptions) async throws -> ScenarioResult {
        var result = ScenarioResult("first-use")
        let rounds = suite.scaled(short: 20, full: 200)
        let tasks = 1_000
        var wrongRounds: [String] = []
        for round in 0..<rounds {
            constructions.store(0, ordering: .relaxed)
            let path = suite.databaseFile("first-use-\(round)").path
            let root = ScopeRoot(services: [CountedDatabaseKey.self]) {
                $0.sqliteConfiguration = SQLiteConfiguration(path: path)
            }
            let instances = try await withThrowingTaskGroup(of: ObjectIdentifier.self) { group in
                for _ in 0..<tasks {
                    group.addTask {
                        try await root.withScope {
                            ObjectIdentifier(try await ScopedValues.current.service(CountedDatabaseKey.self))
                        }
                    }
                }
                return try await group.reduce(into: [ObjectIdentifier]()) { $0.append($1) }
            }
            await root.shutdown()
            let built = constructions.load(ordering: .relaxed)
            if built != 1 || Set(instances).count != 1 || instances.count != tasks {
                wrongRounds.append("round \(round): \(built) constructions, \(Set(instances).count) instances")
            }
        }
        result.report("\(rounds) rounds of \(tasks.grouped) concurrent first reads")
        result.check(
            "rounds with other than exactly 1 construction: \(wrongRounds.count)",
            target: "0",
            wrongRounds.isEmpty
        )
        if let first = wrongRounds.first { result.report("first: \(first)") }
        return result
    }
}
