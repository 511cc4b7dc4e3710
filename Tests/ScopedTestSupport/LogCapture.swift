public import Logging
import Synchronization

/// Collects the log lines written through its loggers, for tests that assert what was logged,
/// as swift-log's and swift-configuration's own tests do.
///
/// ```swift
/// let capture = LogCapture()
/// var logger = capture.logger(label: "test")
/// logger.info("hello")
/// #expect(capture.lines.map(\.message) == ["hello"])
/// ```
public final class LogCapture: Sendable {
    /// One line that was logged.
    public struct Line: Sendable, CustomStringConvertible {
        /// The line's level.
        public var level: Logger.Level
        /// The message.
        public var message: String
        /// The logger's metadata and the line's, the line's winning.
        public var metadata: Logger.Metadata

        /// A description for logs and error messages.
        public var description: String { "[\(level)] \(message) \(metadata)" }
    }

    private let recorded = Mutex<[Line]>([])

    /// Creates an empty capture.
    public init() {}

    /// Every line logged so far, oldest first.
    public var lines: [Line] { recorded.withLock { $0 } }

    /// A logger whose lines, at `level` and above, go to this capture.
    public func logger(label: String, level: Logger.Level = .trace) -> Logger {
        var logger = Logger(label: label) { _ in Handler(capture: self) }
        logger.logLevel = level
        return logger
    }

    fileprivate func record(_ line: Line) {
        recorded.withLock { $0.append(line) }
    }

    private struct Handler: LogHandler {
        let capture: LogCapture
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { $1 }
            capture.record(Line(level: event.level, message: event.message.description, metadata: merged))
        }
    }
}
