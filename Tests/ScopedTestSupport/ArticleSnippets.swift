public import Foundation

/// The code blocks of documentation articles, and the compiled code that shows them: what keeps
/// every snippet of an article true.
public enum ArticleSnippets {
    /// The repository's root, from a file of one of its test targets.
    public static func repositoryRoot(from filePath: String) -> URL {
        var url = URL(filePath: filePath)
        while url.path != "/" && !FileManager.default.fileExists(atPath: url.appending(path: "Package.swift").path) {
            url = url.deletingLastPathComponent()
        }
        return url
    }

    /// Every ```swift block of the Markdown file at `path`, relative to the repository root.
    public static func inArticle(_ path: String, from filePath: String = #filePath) throws -> [String] {
        let text = try String(contentsOf: repositoryRoot(from: filePath).appending(path: path), encoding: .utf8)
        return text.components(separatedBy: "```swift\n").dropFirst()
            .map { $0.components(separatedBy: "\n```").first ?? "" }
    }

    /// Every piece of `filePath` between a `// SNIPPET-BEGIN` and a `// SNIPPET-END` line,
    /// dedented by its first line's indentation, as an article shows it.
    public static func marked(in filePath: String = #filePath) throws -> [String] {
        let source = try String(contentsOfFile: filePath, encoding: .utf8)
        return source.components(separatedBy: "// SNIPPET-BEGIN\n").dropFirst()
            .map { part in
                let body = part.components(separatedBy: "// SNIPPET-END").first ?? ""
                let lines = body.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
                let indent = lines.first?.prefix { $0 == " " }.count ?? 0
                return lines.map { String($0.dropFirst(min(indent, $0.prefix { $0 == " " }.count))) }
                    .joined(separator: "\n")
            }
    }

    /// Every ```swift block in a `///` doc comment of the Swift files under `folder` (relative
    /// to the repository root), as DocC shows it: each line without its `///` and one space.
    public static func inDocComments(under folder: String, from filePath: String = #filePath) throws -> [String] {
        try swiftFiles(under: folder, from: filePath)
            .flatMap { file in
                var blocks: [String] = []
                var block: [String]?
                for line in try String(contentsOf: file, encoding: .utf8)
                    .split(separator: "\n", omittingEmptySubsequences: false)
                {
                    let trimmed = line.drop { $0 == " " }
                    guard trimmed.hasPrefix("///") else {
                        block = nil
                        continue
                    }
                    var text = trimmed.dropFirst(3)
                    if text.hasPrefix(" ") { text = text.dropFirst() }
                    if block == nil {
                        if text == "```swift" { block = [] }
                    } else if text == "```" {
                        blocks.append(block!.joined(separator: "\n"))
                        block = nil
                    } else {
                        block!.append(String(text))
                    }
                }
                return blocks
            }
    }

    /// Every marked piece (see ``marked(in:)``) of every test file of the repository.
    public static func markedInTests(from filePath: String = #filePath) throws -> [String] {
        try swiftFiles(under: "Tests", from: filePath).flatMap { try marked(in: $0.path) }
    }

    /// The Swift files under `folder`, relative to the repository root, in a stable order.
    private static func swiftFiles(under folder: String, from filePath: String) throws -> [URL] {
        let root = repositoryRoot(from: filePath).appending(path: folder)
        guard let walk = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil) else { return [] }
        return walk.compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }.sorted { $0.path < $1.path }
    }
}
