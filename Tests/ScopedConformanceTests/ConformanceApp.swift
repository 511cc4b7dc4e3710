import Scoped
import ScopedTestSupport
import SessionTestSupport

/// What every stack's handlers do, written once: each stack only maps its requests onto these.
///
/// - `insert` inserts an item in the request's session and answers with the request's ID and
///   the items that session sees; asked to fail, it throws after the insert; asked to pause, it
///   fires ``inFlight`` after the insert and answers a second later.
/// - `export` inserts an item, then streams `chunks` chunks of ``chunkSize`` bytes, each read
///   from the request's session: `1`s when the session sees the item, `0`s when not.
/// - `endless` inserts an item, then streams lines, each read from the session, until the
///   client goes away.
///
/// Each builds the request's ``CommitProbeKey`` after its insert, so that the scope's close
/// takes ``CommitProbeKey/closeTakes`` before the session commits: a stack that sent the end of
/// a response before its scope closed would be seen doing it.
struct ConformanceApp: Sendable {
    /// Bytes per chunk of an export.
    static let chunkSize = 65_536

    /// The database layer the handlers' sessions run on.
    let backend: SessionBackend
    /// Fired by an insert asked to pause, once it has inserted.
    let inFlight = Signal()

    func insert(_ name: String, mode: InsertMode) async throws -> Answer {
        let session = try await backend.session()
        _ = try await session.insert(name)
        _ = try await ScopedValues.current.service(CommitProbeKey.self)
        var audit: String? = nil
        switch mode {
        case .plain: break
        case .auditing: audit = ScopedValues.current.auditTrail
        case .failing: throw Refused(name: name)
        case .pausing:
            inFlight.fire()
            try await Task.sleep(for: .seconds(1))
        }
        return Answer(
            requestID: ScopedValues.current.requestID ?? "",
            names: try await session.names(),
            root: ScopedValues.current.rootName,
            audit: audit
        )
    }

    /// Inserts `name` before an export's first chunk.
    func beginExport(_ name: String) async throws {
        _ = try await backend.session().insert(name)
        _ = try await ScopedValues.current.service(CommitProbeKey.self)
    }

    /// A chunk of an export of `name`, read from the request's session.
    func chunk(of name: String) async throws -> [UInt8] {
        let sees = try await backend.session().names().contains(name)
        return [UInt8](repeating: sees ? UInt8(ascii: "1") : UInt8(ascii: "0"), count: Self.chunkSize)
    }

    /// Line `number` of an endless stream: how many items the request's session sees.
    func line(_ number: Int) async throws -> String {
        let count = try await backend.session().names().count
        try await Task.sleep(for: .milliseconds(5))
        return "line \(number) of \(count)\n"
    }
}

/// What an insert's handler does after its insert.
enum InsertMode: String, Codable, Sendable {
    /// Answers.
    case plain
    /// Throws ``Refused``.
    case failing
    /// Fires ``ConformanceApp/inFlight``, then answers a second later.
    case pausing
    /// Answers with ``ScopedValues/auditTrail``, a live-only entry.
    case auditing
}

/// What `insert` answers.
struct Answer: Codable, Sendable, Equatable {
    var requestID: String
    var names: [String]
    /// The ``ScopedValues/rootName`` of the root the request's scope opened on.
    var root: String
    /// The ``ScopedValues/auditTrail`` an auditing insert read.
    var audit: String? = nil
}

/// What a handler asked to fail throws, after its insert.
struct Refused: Error {
    var name: String
}

extension ScopedValues {
    /// Where the request's ``CommitProbeKey`` records how its scope closed.
    @Entry var conformanceLog: CloseLog? = nil
    /// Names the root a request's scope opened on, for the tests that reload.
    @Entry var rootName: String = "-"
    /// A live-only entry: a test that reads it without overriding it fails.
    @Entry(testValue: "stand-in") var auditTrail: String = "live"
}

/// A request resource whose close takes ``closeTakes`` and then records the scope's outcome in
/// the request's ``ScopedValues/conformanceLog``: built after the session, it closes before the
/// session commits, so a response whose end arrived before that record was sent before its
/// scope closed.
enum CommitProbeKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.scope

    /// How long the close takes: long enough that a client could not miss an early response.
    static let closeTakes = Duration.milliseconds(300)

    static func makeValue() async throws -> CloseLog { ScopedValues.current.conformanceLog! }

    static func close(_ log: CloseLog, outcome: ScopeOutcome) async throws {
        try? await Task.sleep(for: closeTakes)
        log.record(outcome)
    }
}
