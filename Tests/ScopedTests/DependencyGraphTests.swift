import Foundation
import FoundationXML
@testable import Scoped
import ScopedDiagnostics
import ScopedTestSupport
import Testing

/// A scope service built from an app service.
enum GraphSessionKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.scope
    static func makeValue() async throws -> Resource { try await ScopedValues.current.service(AppClockKey.self) }
}

/// The dependency graph a root records while services are built.
struct DependencyGraphTests {
    private typealias Edge = DependencyGraph.Edge

    @Test func afterValidationTheGraphHoldsEveryReadIncludingReadsOfServicesAlreadyBuilt() async throws {
        let root = ScopeRoot(
            services: [
                DiamondLeftKey.self, DiamondRightKey.self, DiamondSharedKey.self, GraphSessionKey.self,
                AppClockKey.self,
            ],
            observers: [DependencyGraphRecorder()]
        )
        #expect(await root.validate().isEmpty)
        let graph = try root.recordedGraph
        // The right side reads the shared service the left side had already built.
        #expect(
            Set(graph.edges) == [
                Edge(from: DiamondLeftKey.name, to: DiamondSharedKey.name, refused: nil),
                Edge(from: DiamondRightKey.name, to: DiamondSharedKey.name, refused: nil),
                Edge(from: GraphSessionKey.name, to: AppClockKey.name, refused: nil),
            ]
        )
        #expect(graph.services.first { $0.name == GraphSessionKey.name }?.lifetime == .scope)
        #expect(graph.services.first { $0.name == AppClockKey.name }?.lifetime == .app)
        #expect(graph.dependents(of: DiamondSharedKey.name) == [DiamondLeftKey.name, DiamondRightKey.name].sorted())
        #expect(graph.dependents(of: AppClockKey.name) == [GraphSessionKey.name])
        #expect(graph.dependents(of: DiamondLeftKey.name).isEmpty)
    }

    @Test func readsValidationRefusedAreMarkedWithTheReason() async throws {
        let root = ScopeRoot(
            services: [CaptiveRepositoryKey.self, SessionKey.self, CycleAKey.self],
            observers: [DependencyGraphRecorder()]
        )
        #expect(await root.validate().count == 2)
        let edges = Set(try root.recordedGraph.edges)
        #expect(edges.contains(Edge(from: CaptiveRepositoryKey.name, to: SessionKey.name, refused: .captiveDependency)))
        #expect(edges.contains(Edge(from: CycleAKey.name, to: CycleBKey.name, refused: nil)))
        #expect(edges.contains(Edge(from: CycleBKey.name, to: CycleAKey.name, refused: .cycle)))
    }

    @Test func aRootWithoutTheRecorderHasNoGraphAndARecorderSeesOnlyItsOwnRoot() async throws {
        let plain = ScopeRoot(services: [GraphSessionKey.self, AppClockKey.self])
        let recorded = ScopeRoot(services: [AppClockKey.self], observers: [DependencyGraphRecorder()])
        #expect(await plain.validate().isEmpty)
        #expect(plain.dependencyGraph() == nil)
        #expect(try recorded.recordedGraph.edges.isEmpty)
        #expect(try recorded.recordedGraph.services.map(\.name) == [AppClockKey.name])
        await plain.shutdown()
        await recorded.shutdown()
    }

    @Test func readsOutsideAnyConstructionAreNotDependencies() async throws {
        let root = ScopeRoot(observers: [DependencyGraphRecorder()])
        try await root.withScope {
            _ = try await ScopedValues.current.service(AppClockKey.self)
            _ = try await ScopedValues.current.service(GraphSessionKey.self)
            _ = try await ScopedValues.current.service(AppClockKey.self)
        }
        #expect(try root.recordedGraph.edges == [Edge(from: GraphSessionKey.name, to: AppClockKey.name, refused: nil)])
    }

    @Test func aReadThatManyConcurrentScopesRepeatIsOneEdgeAndAReadRefusedLaterIsItsOwn() async throws {
        let root = ScopeRoot(
            services: [GraphSessionKey.self, AppClockKey.self],
            observers: [DependencyGraphRecorder()]
        )
        // 200 requests at once, each building its session from the same app service.
        try await withThrowingTaskGroup { group in
            for _ in 0..<200 {
                group.addTask {
                    try await root.withScope { _ = try await ScopedValues.current.service(GraphSessionKey.self) }
                }
            }
            try await group.waitForAll()
        }
        let graph = try root.recordedGraph
        #expect(graph.edges == [Edge(from: GraphSessionKey.name, to: AppClockKey.name, refused: nil)])
        #expect(graph.services.map(\.name) == [AppClockKey.name, GraphSessionKey.name].sorted())
        // A refused read, made by every validation, is recorded once, with its reason.
        let captive = ScopeRoot(
            services: [CaptiveRepositoryKey.self, SessionKey.self],
            observers: [DependencyGraphRecorder()]
        )
        for _ in 0..<3 { _ = await captive.validate() }
        #expect(
            try captive.recordedGraph.edges.filter { $0.from == CaptiveRepositoryKey.name } == [
                Edge(from: CaptiveRepositoryKey.name, to: SessionKey.name, refused: .captiveDependency)
            ]
        )
    }

    @Test func theGraphRendersAsDOTAndMermaid() async throws {
        let root = ScopeRoot(
            services: [CaptiveRepositoryKey.self, GraphSessionKey.self],
            observers: [DependencyGraphRecorder()]
        )
        _ = await root.validate()
        let graph = try root.recordedGraph
        let (captive, session, clock, graphSession) =
            (CaptiveRepositoryKey.name, SessionKey.name, AppClockKey.name, GraphSessionKey.name)
        #expect(graph.dot.hasPrefix("digraph dependencies {\n"))
        #expect(graph.dot.contains(#""\#(clock)" [shape=box, label="\#(clock)\n(app)"];"#))
        #expect(graph.dot.contains(#""\#(graphSession)" [shape=ellipse, label="\#(graphSession)\n(scope)"];"#))
        #expect(graph.dot.contains(#""\#(graphSession)" -> "\#(clock)";"#))
        #expect(
            graph.dot.contains(
                #""\#(captive)" -> "\#(session)" [color=red, style=dashed, label="captive dependency"];"#
            )
        )
        let ids = Dictionary(
            uniqueKeysWithValues: graph.services.enumerated().map { ($0.element.name, "s\($0.offset)") }
        )
        #expect(graph.mermaid.hasPrefix("flowchart LR\n"))
        #expect(graph.mermaid.contains("    \(ids[graphSession]!) --> \(ids[clock]!)\n"))
        #expect(graph.mermaid.contains("    \(ids[captive]!) -. captive dependency .-> \(ids[session]!)\n"))
        #expect(graph.mermaid.contains("    \(ids[clock]!)[\"\(clock)<br/>(app)\"]\n"))
    }

    @Test func theGraphRendersAsAnSVGWithReadersLeftOfWhatTheyRead() async throws {
        let root = ScopeRoot(
            services: [CaptiveRepositoryKey.self, GraphSessionKey.self],
            observers: [DependencyGraphRecorder()]
        )
        _ = await root.validate()
        let graph = try root.recordedGraph
        let picture = try SVGPicture(graph.svg)
        // Every service is drawn once, named, with its lifetime under its name.
        #expect(picture.texts.filter { graph.services.map(\.name).contains($0.text) }.count == graph.services.count)
        #expect(picture.texts.contains { $0.text == "(scope)" } && picture.texts.contains { $0.text == "(app)" })
        // A reader stands left of what it reads, so every served edge points right.
        for edge in graph.edges {
            let (from, to) = (try #require(picture.x(of: edge.from)), try #require(picture.x(of: edge.to)))
            #expect(from < to, "\(edge.from) is drawn at \(from), right of \(edge.to) at \(to)")
        }
        // One path per edge; the refused read is the one red dashed path, labelled.
        #expect(picture.paths.count == graph.edges.count + 1)  // + the arrow head's
        #expect(picture.paths.filter { $0["stroke-dasharray"] != nil && $0["stroke"] == "#c00" }.count == 1)
        #expect(picture.texts.contains { $0.text == "captive dependency" })
    }
}

/// The start-up report: how long each app service took to build.
struct AppServiceBuildReportTests {
    @Test func validationRecordsEachAppServicesBuildTimeSlowestFirstAndNoScopeService() async throws {
        let root = ScopeRoot(
            services: [AppClockKey.self, SlowAppKey.self, GraphSessionKey.self],
            observers: [DependencyGraphRecorder()]
        )
        #expect(await root.validate().isEmpty)
        let builds = try root.recordedGraph.appServiceBuilds
        #expect(builds.map(\.name) == [SlowAppKey.name, AppClockKey.name])
        #expect(builds[0].duration >= .milliseconds(20))  // SlowAppKey sleeps 20 ms while it builds
        #expect(builds[1].duration < builds[0].duration)
        #expect(try root.recordedGraph.services.first { $0.name == GraphSessionKey.name }?.buildDuration == nil)
    }
}

/// An SVG document's texts (with their x) and paths, read with an XML parser: what a browser
/// would draw, checked without one.
private final class SVGPicture: NSObject, XMLParserDelegate {
    var texts: [(text: String, x: Double)] = []
    var paths: [[String: String]] = []
    private var openText: (text: String, x: Double)?

    init(_ svg: String) throws {
        super.init()
        let parser = XMLParser(data: Data(svg.utf8))
        parser.delegate = self
        guard parser.parse() else { throw parser.parserError ?? CocoaError(.coderReadCorrupt) }
    }

    /// The x of the name drawn for `service` (the middle of its box).
    func x(of service: String) -> Double? { texts.first { $0.text == service }?.x }

    func parser(
        _ parser: XMLParser,
        didStartElement element: String,
        namespaceURI: String?,
        qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        if element == "text" { openText = ("", Double(attributes["x"] ?? "") ?? .nan) }
        if element == "path" { paths.append(attributes) }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) { openText?.text += string }

    func parser(_ parser: XMLParser, didEndElement element: String, namespaceURI: String?, qualifiedName: String?) {
        if element == "text", let text = openText { texts.append(text) }
        if element == "text" { openText = nil }
    }
}

extension ScopeRoot {
    /// The graph its recorder recorded; a test fails when it has none.
    fileprivate var recordedGraph: DependencyGraph {
        get throws { try #require(dependencyGraph()) }
    }
}
