import Foundation

/// The `otel` section: the OpenTelemetry collector the server sends its spans and metrics to.
///
/// They go over OTLP/HTTP. Without an endpoint nothing is exported, and `GET /metrics` serves
/// as before.
///
/// The keys are OpenTelemetry's own variables, read as the other sections' are:
/// `OTEL_EXPORTER_OTLP_ENDPOINT` overrides `otel.exporter.otlp.endpoint`,
/// `OTEL_EXPORTER_OTLP_PROTOCOL` `otel.exporter.otlp.protocol`, and `OTEL_SERVICE_NAME`
/// `otel.service.name`. swift-otel reads the rest of OpenTelemetry's variables itself (a
/// signal's own endpoint, headers, timeouts, the batch delay).
struct OTLPSettings: Sendable, Hashable {
    /// How the exporter encodes what it sends.
    enum Encoding: String, Sendable, CaseIterable {
        case protobuf = "http/protobuf"
        case json = "http/json"
    }

    /// `otel.exporter.otlp.endpoint`: the collector's base URL, `http` or `https`; traces go to
    /// `<endpoint>/v1/traces` and metrics to `<endpoint>/v1/metrics`, as OpenTelemetry's SDKs
    /// send them.
    var endpoint: String
    /// `otel.exporter.otlp.protocol`: `http/protobuf` (the default) or `http/json`.
    var encoding: Encoding
    /// `otel.service.name`: the `service.name` every span and metric carries; `movie-catalog`
    /// unless set.
    var serviceName: String

    /// The URL a signal is sent to: `path` (`v1/traces`, `v1/metrics`) under the endpoint.
    func url(of path: String) -> String {
        endpoint.hasSuffix("/") ? endpoint + path : endpoint + "/" + path
    }

    /// The section as `values` hold it, or `nil` when no endpoint is set.
    ///
    /// - Throws: ``ConfigurationError`` naming the key and its file or variable, for an endpoint
    ///   that is not an `http` or `https` URL with a host, or an encoding this build cannot send
    ///   (`grpc` included: the example is built with swift-otel's HTTP exporter only).
    static func read(_ values: ConfigValues) throws -> OTLPSettings? {
        guard let endpoint = try values.optionalString("otel.exporter.otlp.endpoint"), !endpoint.isEmpty else {
            return nil
        }
        guard let url = URL(string: endpoint), let scheme = url.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = url.host, !host.isEmpty
        else {
            throw values.error(
                "otel.exporter.otlp.endpoint",
                "'\(endpoint)' is not an http or https URL with a host, such as http://127.0.0.1:4318"
            )
        }
        let encodingKey = "otel.exporter.otlp.protocol"
        var encoding = Encoding.protobuf
        if let name = try values.optionalString(encodingKey) {
            guard let chosen = Encoding(rawValue: name) else {
                let accepted = Encoding.allCases.map(\.rawValue).joined(separator: " or ")
                throw values.error(encodingKey, "'\(name)' is not sent by this server; use \(accepted)")
            }
            encoding = chosen
        }
        return OTLPSettings(
            endpoint: endpoint,
            encoding: encoding,
            serviceName: try values.string("otel.service.name", default: "movie-catalog")
        )
    }
}
