import Foundation
import Logging
import ScopedTestSupport
import Synchronization
import Testing

@testable import CatalogApp

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Several instances of the example server on one PostgreSQL database, with
/// `settings.fromDatabase`: a change an operator commits with `scoped_set_setting` is applied by
/// every instance, or rejected by every instance with the old configuration still serving.
@Suite(
    .serialized,
    .loadExclusion,
    .enabled(if: PostgresTestServer.isEnabled, Comment(rawValue: PostgresTestServer.unavailableReason ?? ""))
)
struct DatabaseSettingsTests {
    private func withInstances(
        _ count: Int,
        _ body: (_ instances: [ServerInstance], _ sql: @Sendable (String) async throws -> String) async throws -> Void
    ) async throws {
        try await ServerInstance.withInstances(
            count,
            // No periodic poll: every version here is read from its notification. A poll that
            // ran between a commit and its notification read the version first, and the instance
            // said so (`source` "poll"), which the first test does not expect.
            environment: [
                "APP_ENV": "development", "SETTINGS_FROM_DATABASE": "true", "SETTINGS_POLL_INTERVAL": "3600",
            ],
            ready: { (try? await $0.settings())?["listening"] as? Bool == true },
            body
        )
    }

    @Test func threeInstancesServeEachCommittedChangeAndNoRequestFails() async throws {
        try await withInstances(3) { instances, sql in
            // `/health` runs the checks the configured parts contributed: the database, and the
            // settings listener, listening.
            for instance in instances {
                let health = try await instance.get("/health")
                #expect(health.status == 200)
                let report = try JSONDecoder().decode(HealthReport.self, from: Data(health.body.utf8))
                #expect(report.status == "ok")
                #expect(report.checks.map(\.name) == ["database", "settings"])
            }
            let counts = SettingsLoadCounts()
            // 6 clients spread over the three instances, reading and writing all along (the
            // reliability suite runs 16, on its own); stopped by
            // a flag, never by cancellation (FoundationNetworking's `data(for:)` can deadlock then).
            let clients = (0..<6)
                .map { client in
                    Task { () -> [String] in
                        let instance = instances[client % instances.count]
                        var acknowledged: [String] = []
                        var number = 0
                        while !counts.stopped.load(ordering: .relaxed) {
                            number += 1
                            if client.isMultiple(of: 4) {
                                let body = #"{"title":"Settings \#(client)-\#(number)","year":2001,"director":"Test"}"#
                                let response = try? await instance.get("/movies", method: "POST", body: body)
                                if response?.status == 201, let id = response?.body.firstMatch(of: /"id":(\d+)/) {
                                    acknowledged.append("/movies/\(id.1)")
                                } else {
                                    counts.failures.add(1, ordering: .relaxed)
                                }
                            } else {
                                let status = (try? await instance.get("/movies?limit=5").status) ?? 0
                                if status != 200 { counts.failures.add(1, ordering: .relaxed) }
                            }
                            counts.served.add(1, ordering: .relaxed)
                        }
                        return acknowledged
                    }
                }
            defer { counts.stopped.store(true, ordering: .relaxed) }
            // 20 changes in a row, alternating the override rule's variants; each instance is asked
            // for the version it serves until it serves the one just committed, and then follows it.
            for change in 1...20 {
                // The override rule: what every request follows, and it moves no write elsewhere.
                let variants = change.isMultiple(of: 2) ? #"["fixture"]"# : "[]"
                let version = try await sql("SELECT scoped_set_setting('overrides.variants', '\(variants)')")
                #expect(Int(version) == change)
                for instance in instances {
                    let served = await eventually(within: .seconds(10)) {
                        (try? await instance.settings())?["version"] as? Int == change
                    }
                    #expect(served, "\(instance.base) did not apply version \(change)")
                }
                for instance in instances {
                    let fixture = try await instance.get("/movies/1", headers: ["X-Catalog": "fixture"]).status
                    #expect(fixture == (change.isMultiple(of: 2) ? 200 : 400), "version \(change) on \(instance.base)")
                }
            }
            counts.stopped.store(true, ordering: .relaxed)
            var written: [String] = []
            for client in clients { written += await client.value }
            // How soon after its commit (1 s, p99) is the reliability suite's figure
            // (`shared-settings`): here the test runs beside the others, on 2 cores.
            #expect(counts.failures.load(ordering: .relaxed) == 0, "requests failed during the changes")
            #expect(counts.served.load(ordering: .relaxed) > 100)
            // Every acknowledged write is there, on every instance.
            #expect(written.count > 5)
            for path in written {
                for instance in instances {
                    #expect(try await instance.get(path).status == 200, "\(path) was acknowledged and lost")
                }
            }
            // The last change (20: the fixture variant allowed) is what every instance serves,
            // read from one notification each time, logged with its version.
            for instance in instances {
                let settings = try await instance.settings()
                #expect(settings["source"] as? String == "notify")
                #expect(settings["lastHeard"] as? String != nil)
                #expect(
                    instance.messages.contains {
                        $0.hasPrefix("Configuration reloaded, generation 21, settings version 20")
                    }
                )
                #expect(try await instance.statistics()["generation"] as? Int == 21)
            }
        }
    }

    @Test func anInvalidValueIsRejectedByEveryInstanceWhichKeepsServingAndTheNextValidOneIsApplied() async throws {
        try await withInstances(2) { instances, sql in
            #expect(try await sql("SELECT scoped_set_setting('log.level', '\"loud\"')") == "1")
            for instance in instances {
                #expect(
                    await eventually(within: .seconds(5)) {
                        instance.messages.contains {
                            $0.hasPrefix(
                                "Configuration reload rejected: Invalid configuration: log.level in PostgreSQL settings, version 1: 'loud' is not an accepted value"
                            )
                        }
                    }
                )
                let settings = try await instance.settings()
                #expect(settings["version"] as? Int == 0)
                #expect(settings["rejectedVersion"] as? Int == 1)
                #expect(try await instance.statistics()["generation"] as? Int == 1)
                #expect(try await instance.get("/movies?limit=1").status == 200)
            }
            #expect(try await sql("SELECT scoped_set_setting('log.level', '\"warning\"')") == "2")
            for instance in instances {
                #expect(
                    await eventually(within: .seconds(5)) { (try? await instance.settings())?["version"] as? Int == 2 }
                )
                let settings = try await instance.settings()
                #expect(settings["rejectedVersion"] == nil)
                #expect(try await instance.statistics()["generation"] as? Int == 2)
            }
            let exposition = try await instances[0].get("/metrics").body
            #expect(exposition.contains(#"scoped_settings_versions_total{outcome="rejected"}"#))
            #expect(exposition.contains(#"scoped_settings_versions_total{outcome="applied"}"#))
            #expect(exposition.contains("scoped_settings_listening 1"))
        }
    }
}

/// The requests the clients made, and those that failed.
private final class SettingsLoadCounts: Sendable {
    let served = Atomic(0)
    let failures = Atomic(0)
    let stopped = Atomic(false)
}
