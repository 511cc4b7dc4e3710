import Foundation
import Hummingbird
import ScopedTestSupport
import Synchronization

/// A collector on loopback that receives OTLP/HTTP exports (`POST /v1/traces`,
/// `POST /v1/metrics`) and keeps what it decoded: enough of OpenTelemetry's collector to see
/// what a server sends it.
///
/// With `answers` off it is a collector that froze: each export is read and never answered
/// until ``release()``.
final class OTLPCollector: Sendable {
    /// A span as OTLP sends it (`opentelemetry.proto.trace.v1.Span`), with its resource's
    /// `service.name`.
    struct Span: Sendable {
        var traceID: [UInt8]
        var spanID: [UInt8]
        var parentSpanID: [UInt8]
        var name: String
        var attributes: [String: Attribute]
        var serviceName: String?
    }

    /// An attribute's value (`AnyValue`): the two kinds the server's spans carry.
    enum Attribute: Sendable, Equatable {
        case string(String)
        case int(Int64)
        case other
    }

    private let answers: Bool
    private let state = Mutex<(spans: [Span], metricNames: Set<String>, exports: Int)>(([], [], 0))
    private let released = Signal()

    init(answers: Bool = true) {
        self.answers = answers
    }

    var spans: [Span] { state.withLock { $0.spans } }
    var metricNames: Set<String> { state.withLock { $0.metricNames } }
    /// How many exports reached it, answered or not.
    var exports: Int { state.withLock { $0.exports } }

    /// Lets every export held by a frozen collector be answered.
    func release() { released.fire() }

    /// The collector's HTTP application, for `test(.live)`.
    func application() -> some ApplicationProtocol {
        let router = Router()
        router.post("v1/traces") { request, _ in try await self.receive(request, decode: Self.spans) }
        router.post("v1/metrics") { request, _ in try await self.receive(request, decode: Self.metricNames) }
        return Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
    }

    private func receive(
        _ request: Request,
        decode: ([UInt8]) throws -> ([Span], Set<String>)
    ) async throws -> Response {
        var request = request
        let body = try await request.collectBody(upTo: 64 << 20)
        let (spans, names) = try decode(Array(buffer: body))
        state.withLock {
            $0.exports += 1
            $0.spans += spans
            $0.metricNames.formUnion(names)
        }
        if !answers { await released.wait() }
        // An empty `Export…ServiceResponse`: everything accepted.
        return Response(status: .ok, headers: [.contentType: "application/x-protobuf"])
    }

    /// The spans of an `ExportTraceServiceRequest`.
    private static func spans(_ bytes: [UInt8]) throws -> ([Span], Set<String>) {
        var spans: [Span] = []
        for resourceSpans in try ProtobufMessage(bytes).messages(1) {
            let resource = try resourceSpans.messages(1).first
            let serviceName = try resource.flatMap { try attributes($0.messages(1))["service.name"] }
            for scopeSpans in try resourceSpans.messages(2) {
                for span in try scopeSpans.messages(2) {
                    spans.append(
                        Span(
                            traceID: span.bytes(1) ?? [],
                            spanID: span.bytes(2) ?? [],
                            parentSpanID: span.bytes(4) ?? [],
                            name: span.string(5) ?? "",
                            attributes: try attributes(span.messages(9)),
                            serviceName: serviceName.flatMap { if case .string(let name) = $0 { name } else { nil } }
                        )
                    )
                }
            }
        }
        return (spans, [])
    }

    /// The names of the metrics in an `ExportMetricsServiceRequest`.
    private static func metricNames(_ bytes: [UInt8]) throws -> ([Span], Set<String>) {
        var names: Set<String> = []
        for resourceMetrics in try ProtobufMessage(bytes).messages(1) {
            for scopeMetrics in try resourceMetrics.messages(2) {
                for metric in try scopeMetrics.messages(2) { names.insert(metric.string(1) ?? "") }
            }
        }
        return ([], names)
    }

    /// `KeyValue`s (key 1, `AnyValue` 2: a string is its field 1, an integer its field 3).
    private static func attributes(_ keyValues: [ProtobufMessage]) throws -> [String: Attribute] {
        var attributes: [String: Attribute] = [:]
        for keyValue in keyValues {
            guard let key = keyValue.string(1) else { continue }
            let value = try keyValue.messages(2).first
            attributes[key] =
                if let string = value?.string(1) {
                    .string(string)
                } else if let int = value?.varint(3) {
                    .int(Int64(bitPattern: int))
                } else {
                    .other
                }
        }
        return attributes
    }
}

/// A protobuf message read field by field from its wire format, without its schema: what a
/// test needs to read OTLP without generating OpenTelemetry's types.
struct ProtobufMessage {
    enum Field {
        case varint(UInt64)
        case bytes([UInt8])
        case fixed
    }

    struct MalformedMessage: Error {}

    private(set) var fields: [(number: Int, value: Field)] = []

    init(_ bytes: [UInt8]) throws {
        var index = 0
        func varint() throws -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                guard index < bytes.count, shift < 64 else { throw MalformedMessage() }
                let byte = bytes[index]
                index += 1
                value |= UInt64(byte & 0x7F) << shift
                if byte & 0x80 == 0 { return value }
                shift += 7
            }
        }
        func skip(_ count: Int) throws {
            guard count >= 0, index + count <= bytes.count else { throw MalformedMessage() }
            index += count
        }
        while index < bytes.count {
            let tag = try varint()
            let number = Int(tag >> 3)
            switch tag & 7 {
            case 0:
                fields.append((number, .varint(try varint())))
            case 1:
                try skip(8)
                fields.append((number, .fixed))
            case 2:
                let length = Int(try varint())
                let start = index
                try skip(length)
                fields.append((number, .bytes(Array(bytes[start..<index]))))
            case 5:
                try skip(4)
                fields.append((number, .fixed))
            default:
                throw MalformedMessage()
            }
        }
    }

    /// Every embedded message with field number `number`.
    func messages(_ number: Int) throws -> [ProtobufMessage] {
        try fields.compactMap { field in
            guard field.number == number, case .bytes(let bytes) = field.value else { return nil }
            return try ProtobufMessage(bytes)
        }
    }

    /// The last bytes value of field `number`.
    func bytes(_ number: Int) -> [UInt8]? {
        fields.last { $0.number == number }.flatMap { if case .bytes(let bytes) = $0.value { bytes } else { nil } }
    }

    /// The last value of field `number` as UTF-8 text.
    func string(_ number: Int) -> String? {
        bytes(number).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The last varint of field `number`.
    func varint(_ number: Int) -> UInt64? {
        fields.last { $0.number == number }.flatMap { if case .varint(let value) = $0.value { value } else { nil } }
    }
}
