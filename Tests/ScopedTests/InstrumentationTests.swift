import InMemoryTracing
import MetricsTestKit
@testable import Scoped
import ScopedInstrumentation
import Testing
import Tracing

/// A scope service that fails to build.
enum UnbuildableKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.scope
    static func makeValue() async throws -> Resource { throw BuildFailure() }
}

struct BuildFailure: Error {}

/// The spans and metrics a root reports for its scopes and services.
struct InstrumentationTests {
    private func attribute(_ span: FinishedInMemorySpan, _ name: String) -> String? {
        guard case .string(let value) = span.attributes.get(name)?.toSpanAttribute() else { return nil }
        return value
    }

    @Test func buildsAndClosesAreSpansNestedUnderTheCurrentSpanAndReadsAreNot() async throws {
        let tracer = InMemoryTracer()
        let root = ScopeRoot(observers: [ScopeInstrumentation(tracer: tracer)])
        try await tracer.withSpan("request", context: .topLevel) { _ in
            try await root.withScope {
                // The session reads the app clock while it builds: the clock's span nests in it.
                for _ in 0..<10 { _ = try await ScopedValues.current.service(GraphSessionKey.self) }
            }
        }
        let spans = tracer.finishedSpans
        let request = try #require(spans.first { $0.operationName == "request" })
        let builds = spans.filter { $0.operationName == "scoped.build" }
        let closes = spans.filter { $0.operationName == "scoped.close" }
        #expect(builds.count == 2)
        #expect(closes.count == 1)
        let sessionBuild = try #require(builds.first { attribute($0, "scoped.entry") == GraphSessionKey.name })
        let clockBuild = try #require(builds.first { attribute($0, "scoped.entry") == AppClockKey.name })
        #expect(sessionBuild.parentSpanID == request.spanID)
        #expect(clockBuild.parentSpanID == sessionBuild.spanID)
        #expect(attribute(sessionBuild, "scoped.lifetime") == "scope")
        #expect(attribute(clockBuild, "scoped.lifetime") == "app")
        let close = try #require(closes.first)
        #expect(attribute(close, "scoped.entry") == GraphSessionKey.name)
        #expect(attribute(close, "scoped.outcome") == "success")
        #expect(close.parentSpanID == request.spanID)
        #expect(spans.allSatisfy { $0.traceID == request.traceID })
        // The app clock closes at shutdown, outside the request.
        await root.shutdown()
        let shutdownClose = try #require(tracer.finishedSpans.last)
        #expect(attribute(shutdownClose, "scoped.entry") == AppClockKey.name)
        #expect(shutdownClose.parentSpanID == nil)
    }

    @Test func aFailedBuildAndAFailedCloseRecordTheirErrorsOnTheirSpans() async throws {
        let tracer = InMemoryTracer()
        let root = ScopeRoot(onCloseError: { _ in }, observers: [ScopeInstrumentation(tracer: tracer)])
        await #expect(throws: BuildFailure.self) {
            try await root.withScope { _ = try await ScopedValues.current.service(UnbuildableKey.self) }
        }
        await #expect(throws: ScopeCloseError.self) {
            try await root.withScope { _ = try await ScopedValues.current.service(FailingCloseKey.self) }
        }
        let build = try #require(tracer.finishedSpans.first { attribute($0, "scoped.entry") == UnbuildableKey.name })
        #expect(build.errors.count == 1 && build.errors.first?.error is BuildFailure)
        #expect(build.status?.code == .error)
        let close = try #require(
            tracer.finishedSpans.first {
                $0.operationName == "scoped.close" && attribute($0, "scoped.entry") == FailingCloseKey.name
            }
        )
        #expect(close.errors.first?.error is CloseFailure)
        #expect(close.status?.code == .error)
        #expect(attribute(close, "scoped.outcome") == "success")
    }

    @Test func aRegisteredEntrysMetricsAreMadeWithTheRootSoThatABuildOnlyRecords() async throws {
        let metrics = TestMetrics()
        let root = ScopeRoot(
            services: [GraphSessionKey.self, AppClockKey.self],
            observers: [ScopeInstrumentation(metricsFactory: metrics)]
        )
        // Before any build: the handles exist, at zero.
        let builds = try metrics.expectCounter(
            "scoped_service_builds_total",
            [("entry", GraphSessionKey.name), ("lifetime", "scope")]
        )
        let closes = try metrics.expectCounter(
            "scoped_service_closes_total",
            [("entry", AppClockKey.name), ("lifetime", "app")]
        )
        #expect(builds.totalValue == 0 && closes.totalValue == 0)
        for _ in 0..<3 { try await root.withScope { _ = try await ScopedValues.current.service(GraphSessionKey.self) } }
        #expect(builds.totalValue == 3)
        await root.shutdown()
        #expect(closes.totalValue == 1)
    }

    @Test func scopesAndServicesAreCountedByOutcomeEntryAndLifetime() async throws {
        let metrics = TestMetrics()
        let root = ScopeRoot(onCloseError: { _ in }, observers: [ScopeInstrumentation(metricsFactory: metrics)])
        let open = try metrics.expectMeter("scoped_scopes_open")
        try await root.withScope {
            #expect(open.lastValue == 1)
            _ = try await ScopedValues.current.service(GraphSessionKey.self)
        }
        #expect(open.lastValue == 0)
        await #expect(throws: BuildFailure.self) {
            try await root.withScope { _ = try await ScopedValues.current.service(UnbuildableKey.self) }
        }
        let cancelled = Task {
            try await root.withScope {
                _ = try await ScopedValues.current.service(FailingCloseKey.self)
                withUnsafeCurrentTask { $0?.cancel() }
                throw CancellationError()
            }
        }
        _ = await cancelled.result
        #expect(open.lastValue == 0)
        let scopes = { (outcome: String) in
            metrics.counterTotal(label: "scoped_scopes_total", dimensions: [("outcome", outcome)])
        }
        #expect(scopes("success") == 1)
        #expect(scopes("failure") == 1)
        #expect(scopes("cancelled") == 1)
        let builds = { (entry: String, lifetime: String) in
            metrics.counterTotal(
                label: "scoped_service_builds_total",
                dimensions: [("entry", entry), ("lifetime", lifetime)]
            )
        }
        #expect(builds(GraphSessionKey.name, "scope") == 1)
        #expect(builds(AppClockKey.name, "app") == 1)
        #expect(builds(FailingCloseKey.name, "scope") == 1)
        // A build that failed built nothing.
        #expect(builds(UnbuildableKey.name, "scope") == 0)
        let buildTime = try metrics.expectTimer("scoped_service_build_seconds", [("entry", AppClockKey.name)])
        #expect(buildTime.values.count == 1)
        #expect(
            metrics.counterTotal(
                label: "scoped_service_closes_total",
                dimensions: [("entry", FailingCloseKey.name), ("lifetime", "scope")]
            ) == 1
        )
        #expect(
            metrics.counterTotal(
                label: "scoped_service_close_failures_total",
                dimensions: [("entry", FailingCloseKey.name)]
            )
                == 1
        )
        #expect(
            metrics.counterTotal(
                label: "scoped_service_close_failures_total",
                dimensions: [("entry", GraphSessionKey.name)]
            )
                == 0
        )
    }

    @Test func bootstrappedTakesTheTracerBoundWhereItIsReadAndARootWithoutItReportsNothing() async throws {
        let tracer = InMemoryTracer()
        let (bootstrapped, disabled) = withTracer(tracer) {
            (ScopeRoot(observers: [ScopeInstrumentation.bootstrapped]), ScopeRoot())
        }
        try await bootstrapped.withScope { _ = try await ScopedValues.current.service(GraphSessionKey.self) }
        let reported = tracer.finishedSpans.count
        #expect(reported == 3)
        try await withTracer(tracer) {
            try await disabled.withScope { _ = try await ScopedValues.current.service(GraphSessionKey.self) }
        }
        #expect(tracer.finishedSpans.count == reported)
    }

    @Test func concurrentScopesCountEveryOpenAndClose() async throws {
        let metrics = TestMetrics()
        let root = ScopeRoot(observers: [ScopeInstrumentation(metricsFactory: metrics)])
        try await withThrowingTaskGroup { group in
            for _ in 0..<200 {
                group.addTask {
                    try await root.withScope { _ = try await ScopedValues.current.service(SessionKey.self) }
                }
            }
            try await group.waitForAll()
        }
        #expect(try metrics.expectMeter("scoped_scopes_open").lastValue == 0)
        #expect(metrics.counterTotal(label: "scoped_scopes_total", dimensions: [("outcome", "success")]) == 200)
        #expect(
            metrics.counterTotal(
                label: "scoped_service_builds_total",
                dimensions: [("entry", SessionKey.name), ("lifetime", "scope")]
            ) == 200
        )
    }
}
