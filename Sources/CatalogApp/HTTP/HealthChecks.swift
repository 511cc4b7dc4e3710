import Foundation
import Scoped
import ScopedPostgres

/// One part of the server that `/health` reports on: the database, the settings listener, the
/// tenant registry.
///
/// Each is contributed to `ScopedValues.healthChecks` where the root is configured with that
/// part; `/health` runs every one.
///
/// A check reads what its part knows already (connection counts, when the database last
/// answered): it sends no statement, so `/health` answers at once while the database is slow or
/// down, as a liveness probe must.
protocol HealthCheck: Sendable {
    /// The part checked: `"database"`, `"settings"`, `"tenantRegistry"`.
    var name: String { get }
    /// How the part is now.
    func check() async -> HealthReport.Check
}

extension ScopedValues {
    /// The health checks the server's parts contributed, in the order they were contributed.
    @Entry var healthChecks: Contributions<any HealthCheck> = Contributions()
}

/// `/health`'s body: `ok` when every check is, `degraded` otherwise.
///
/// It answers 200 either way: the process serves, which is what the probe asks; the checks say
/// what is wrong.
struct HealthReport: Codable, Equatable {
    /// One check's result.
    struct Check: Codable, Equatable {
        var name: String
        /// `ok` or `failing`.
        var status: String
        /// What the check saw, for a person.
        var detail: String
    }

    var status: String
    var checks: [Check]

    /// Runs every check contributed to the current scope, in order.
    static func current() async throws -> HealthReport {
        var checks: [Check] = []
        for check in try await ScopedValues.current.healthChecks.elements() { checks.append(await check.check()) }
        return HealthReport(status: checks.allSatisfy { $0.status == "ok" } ? "ok" : "degraded", checks: checks)
    }
}

/// The application database: its pool's connections, read from the request's scope.
struct DatabaseHealthCheck: HealthCheck {
    var name: String { "database" }

    func check() async -> HealthReport.Check {
        do {
            let statistics = try await ScopedValues.current.debugDatabase.statistics()
            let detail = "\(statistics.leased) of \(statistics.connections) connections leased"
            return .init(name: name, status: "ok", detail: detail)
        } catch {
            return .init(name: name, status: "failing", detail: "\(error)")
        }
    }
}

/// A listener on PostgreSQL (the settings provider, the tenant registry): failing while its
/// listening connection is down.
struct ListenerHealthCheck: HealthCheck {
    let name: String
    let status: @Sendable () -> PostgresListenerStatus

    func check() async -> HealthReport.Check {
        let status = status()
        let heard = status.lastHeard.map { "last heard \(Int(-$0.timeIntervalSinceNow)) s ago" } ?? "never heard"
        return .init(
            name: name,
            status: status.isListening ? "ok" : "failing",
            detail: "version \(status.version) by \(status.source.rawValue), \(heard)"
        )
    }
}
