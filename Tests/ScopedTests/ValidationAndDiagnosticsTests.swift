import Foundation
@testable import Scoped
import ScopedDiagnostics
import ScopedReload
import Testing

struct ValidationTests {
    @Test func soundRootHasNoProblemsAndClosesItsSyntheticScopeAsCancelled() async {
        let probe = LifetimeProbe()
        let root = ScopeRoot(
            services: [AppClockKey.self, SessionKey.self, SecondResourceKey.self],
            requirements: [Library.self]
        ) {
            $0.probe = probe
            $0.set(Library(name: "main"))
        }
        let problems = await root.validate()
        #expect(problems.isEmpty)
        #expect(probe.builds(of: "appClock") == 1)
        #expect(probe.builds(of: "session") == 1)
        #expect(
            probe.events.suffix(3) == [
                "close secondResource cancelled", "close firstResource cancelled", "close session cancelled",
            ]
        )
        #expect(probe.openCount == 1, "the app service stays built for serving")
    }

    @Test func validationReportsEveryProblemAtOnceWithNames() async {
        let root = ScopeRoot(
            services: [
                CaptiveRepositoryKey.self, CycleAKey.self, AppClockKey.self, BrokenKey.self, FailingCloseKey.self,
            ],
            requirements: [Library.self]
        ) { $0.probe = LifetimeProbe() }
        let problems = await root.validate()
        #expect(
            problems.map(\.kind) == [
                .captiveDependency, .cycle, .missingRequirement, .constructionFailed, .closeFailed,
            ]
        )
        #expect(
            problems.map(\.entry) == [
                "captiveRepository", "cycleA", String(reflecting: Library.self), "broken", "failingClose",
            ]
        )
        #expect(problems[0].message.contains("captiveRepository (app) → session (scope)"))
        #expect(problems[1].message.contains("cycleA (app) → cycleB (app) → cycleA (app)"))
        #expect(problems[2].message.contains("No \(String(reflecting: Library.self)) in the current scope"))
    }

    @Test func requirementMetWhenTheRequestScopeOpensIsNotAProblem() async {
        let root = ScopeRoot(requirements: [Library.self])
        #expect(await root.validate().map(\.kind) == [.missingRequirement])
        #expect(await root.validate(scope: { $0.set(Library(name: "per request")) }).isEmpty)
    }
}

struct DiagnosticsTests {
    @Test func scopeDescribesEntriesKindsOriginsAndVariantsWithoutBuildingAnything() async throws {
        let probe = LifetimeProbe()
        var variants = ScopedVariants()
        variants.register("mock", of: \.titles) { MockTitles(titles: [:]) }
        let root = try ScopeRoot(services: [AppClockKey.self, SessionKey.self]) {
            $0.variants = variants
            $0.probe = probe
            try $0.selectVariant("mock", of: "titles")
            $0.set(Library(name: "main"))
        }
        _ = try await root.withScope { try await ScopedValues.current.service(AppClockKey.self) }
        let description = try await root.withScope({ $0.requestID = "r-1" }) {
            withScopedValues({ $0.copyright = "© Handler" }) { ScopedValues.current.describe() }
        }
        let byName = Dictionary(uniqueKeysWithValues: description.entries.map { ($0.name, $0) })
        #expect(description.depth == 2)
        #expect(byName["probe"]?.origin == .root)
        #expect(byName["titles"]?.origin == .configuration)
        #expect(byName["titles"]?.variant == "mock")
        #expect(byName["requestID"]?.origin == .override(depth: 1))
        #expect(byName["copyright"]?.origin == .override(depth: 2))
        #expect(byName[String(reflecting: Library.self)]?.kind == .object)
        #expect(byName["appClock"]?.kind == .service)
        #expect(byName["appClock"]?.lifetime == .app)
        #expect(byName["appClock"]?.isBuilt == true)
        #expect(byName["session"]?.kind == .service)
        #expect(byName["session"]?.lifetime == .scope)
        #expect(byName["session"]?.isBuilt == false)
        #expect(probe.builds(of: "session") == 0, "describing builds nothing")
        #expect(byName["requestID"]?.valueType == "Swift.Optional<Swift.String>")
        #expect(description.description.contains("copyright: Swift.String [value] from override at depth 2"))
    }

    @Test func descriptionRoundTripsThroughJSON() throws {
        let description = withScopedValues({
            $0.requestID = "r-2"
            $0.set(Library(name: "x"))
        }) {
            ScopedValues.current.describe()
        }
        let data = try JSONEncoder().encode(description)
        #expect(try JSONDecoder().decode(ScopeDescription.self, from: data) == description)
        let json = try #require(String(data: data, encoding: .utf8))
        #expect(json.contains("\"requestID\""))
    }
}

struct VariantTests {
    private func makeVariants() -> ScopedVariants {
        var variants = ScopedVariants()
        variants.register("production", of: \.titles) { ProductionTitles() }
        variants.register("fixture", of: \.titles) { MockTitles(titles: [1: "Toy Story"]) }
        return variants
    }

    @Test func rootAndScopeSelectVariantsByName() async throws {
        let root = try ScopeRoot {
            $0.variants = makeVariants()
            try $0.selectVariant("production", of: "titles")
        }
        let atRoot = try await root.withScope { ScopedValues.current.titles.title(id: 1) }
        let perScope = try await root.withScope({ try $0.selectVariant("fixture", of: "titles") }) {
            ScopedValues.current.titles.title(id: 1)
        }
        #expect(atRoot == "production 1")
        #expect(perScope == "Toy Story")
    }

    @Test func unknownVariantIsAnErrorListingTheKnownOnes() throws {
        let error = try #require(throws: UnknownVariantError.self) {
            try ScopeRoot {
                $0.variants = makeVariants()
                try $0.selectVariant("postgres", of: "titles")
            }
        }
        #expect(error == UnknownVariantError(entry: "titles", variant: "postgres", known: ["fixture", "production"]))
        #expect(error.description.contains("Known variants: fixture, production"))
    }
}

struct ReloadTests {
    @Test func scopesInFlightKeepTheRootTheyStartedWithAndNewScopesSeeTheNewOne() async throws {
        let reloadable = ReloadableScopeRoot(ScopeRoot { $0.copyright = "© v1" })
        let opened = AsyncStream.makeStream(of: Void.self)
        let proceed = AsyncStream.makeStream(of: Void.self)
        let inFlight = Task {
            try await reloadable.withScope {
                let before = ScopedValues.current.copyright
                opened.continuation.yield()
                for await _ in proceed.stream { break }
                return [before, ScopedValues.current.copyright]
            }
        }
        for await _ in opened.stream { break }
        let previous = reloadable.replace(with: ScopeRoot { $0.copyright = "© v2" })
        let fresh = try await reloadable.withScope { ScopedValues.current.copyright }
        #expect(previous.openScopeCount == 1)
        proceed.continuation.yield()
        #expect(try await inFlight.value == ["© v1", "© v1"])
        #expect(fresh == "© v2")
        await previous.shutdown()
        #expect(previous.openScopeCount == 0)
    }
}

struct VariantAttributionTests {
    @Test func onlyWhatAVariantSetsIsAttributedToIt() async throws {
        var variants = ScopedVariants()
        variants.register("fixture", of: \.titles) { MockTitles(titles: [1: "Toy Story"]) }
        let root = ScopeRoot {
            $0.variants = variants
            $0.copyright = "© Root"
        }
        var keptBeforeTheVariant: ScopedValues?
        let description = try await root.withScope({
            $0.requestID = "before"
            keptBeforeTheVariant = $0
            try $0.selectVariant("fixture", of: "titles")
            $0.copyright = "© After"
        }) {
            ScopedValues.current.describe()
        }
        let byName = Dictionary(uniqueKeysWithValues: description.entries.map { ($0.name, $0) })
        #expect(byName["titles"]?.variant == "fixture")
        #expect(byName["titles"]?.origin == .override(depth: 1))
        #expect(byName["requestID"]?.variant == nil)
        #expect(byName["copyright"]?.variant == nil)
        #expect(byName["copyright"]?.origin == .override(depth: 1))

        // The copy kept before the variant was applied shares nothing with it, and what is
        // set through it later is not attributed to it either.
        var kept = try #require(keptBeforeTheVariant)
        kept.requestID = "kept"
        let keptByName = Dictionary(uniqueKeysWithValues: kept.describe().entries.map { ($0.name, $0) })
        #expect(keptByName["titles"] == nil, "the variant was not applied to the kept copy")
        #expect(keptByName["requestID"]?.variant == nil)
        #expect(kept.titles.title(id: 1) == "production 1")
    }

    @Test func anEntrySetAgainBelowTheScopeThatSelectedItsVariantIsNoLongerTheVariants() async throws {
        var variants = ScopedVariants()
        variants.register("fixture", of: \.titles) { MockTitles(titles: [1: "Toy Story"]) }
        let root = try ScopeRoot {
            $0.variants = variants
            try $0.selectVariant("fixture", of: "titles")
        }
        let description = try await root.withScope({ $0.titles = ProductionTitles() }) {
            ScopedValues.current.describe()
        }
        let titles = try #require(description.entries.first { $0.name == "titles" })
        #expect(titles.variant == nil)
        #expect(titles.origin == .override(depth: 1))
        await root.shutdown()
    }

    @Test func aVariantAppliedToAFullNodeIsAttributedInTheGrownCopy() async throws {
        var variants = ScopedVariants()
        variants.register("fixture", of: \.titles) { MockTitles(titles: [1: "Toy Story"]) }
        let root = ScopeRoot { $0.variants = variants }
        let description = try await root.withScope({
            // A request scope's node has room for 4 entries: the variant's write grows it.
            $0.requestID = "r"
            $0.copyright = "© Full"
            $0.serviceLabel = "full"
            $0.retryLimit = 3
            try $0.selectVariant("fixture", of: "titles")
        }) {
            ScopedValues.current.describe()
        }
        let byName = Dictionary(uniqueKeysWithValues: description.entries.map { ($0.name, $0) })
        #expect(byName["titles"]?.variant == "fixture")
        #expect(byName["titles"]?.origin == .override(depth: 1))
        #expect(byName["retryLimit"]?.variant == nil)
    }
}
