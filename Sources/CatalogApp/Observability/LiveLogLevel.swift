package import Logging
import Synchronization

/// The process's log level, which a configuration reload changes: every logger made by the
/// handler ``LiveLogLevel/handler(label:)`` bootstraps reads it at each line, unless a level
/// was set on that logger itself.
package final class LiveLogLevel: Sendable {
    /// The level of the process.
    package static let shared = LiveLogLevel()

    private let raw = Atomic<Int>(Logger.Level.info.rank)

    /// Every level, by rank: made once, where `Logger.Level.allCases` makes an array at each read
    /// (a malloc per log call, several per request).
    private static let levels = Logger.Level.allCases

    /// The lowest level logged.
    package var level: Logger.Level {
        get { Self.levels[raw.load(ordering: .relaxed)] }
        set { raw.store(newValue.rank, ordering: .relaxed) }
    }

    /// A handler writing to standard error at ``shared``'s level, for `LoggingSystem.bootstrap`.
    package static func handler(label: String) -> any LogHandler {
        Handler(base: StreamLogHandler.standardError(label: label))
    }

    private struct Handler: LogHandler {
        var base: StreamLogHandler
        /// A level set on this logger, as swift-log allows each logger its own.
        ///
        /// It changes this logger (and copies made of it later), never the process's level: a
        /// library that sets its own logger's level (swift-otel does, for its diagnostics) must
        /// not turn every other logger up or down.
        var ownLevel: Logger.Level?

        var logLevel: Logger.Level {
            get { ownLevel ?? LiveLogLevel.shared.level }
            set { ownLevel = newValue }
        }

        var metadata: Logger.Metadata {
            get { base.metadata }
            set { base.metadata = newValue }
        }

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { base[metadataKey: key] }
            set { base[metadataKey: key] = newValue }
        }

        func log(event: LogEvent) {
            base.log(event: event)
        }
    }
}

extension Logger.Level {
    fileprivate var rank: Int { Self.allCases.firstIndex(of: self) ?? 0 }
}
