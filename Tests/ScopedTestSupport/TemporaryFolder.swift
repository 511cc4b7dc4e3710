public import Foundation

/// A fresh folder under the system's temporary directory, removed when the value is dropped.
public final class TemporaryFolder: Sendable {
    /// The folder.
    public let url: URL

    /// Creates the folder; `prefix` starts its name.
    public init(prefix: String = "scoped") throws {
        url = FileManager.default.temporaryDirectory.appending(path: "\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// The path of `name` inside the folder.
    public func path(_ name: String) -> String { url.appending(path: name).path }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }
}
